import { describe, expect, test, vi } from 'vitest';

vi.hoisted(() => {
  delete process.env.CI;
});

import type { EngineEvent } from '../../source/engine/events.js';
import { BlastRadius } from '../../source/ui/panels/BlastRadius.js';
import { Verifications } from '../../source/ui/panels/Verifications.js';
import { phaseLabel } from '../../source/ui/store/selectors.js';
import { enter, renderPanel, Script } from './helpers.js';

// Issue 16 item 3: every panel updates from the events of every tick, and the gate where the PR is
// approved shows the whole branch's blast radius.

const started: EngineEvent = {
  type: 'workflow.started',
  project: 'demo',
  prd_title: 'Todo app',
  base_branch: 'main',
  feature_branch: 'ralphy/todo',
  engine: 'ticks',
  resumed_from: null,
  max_cost_usd: null,
  tasks: [{ number: 1, title: 'Greet', status: 'pending' }],
};

const judged = (files: string[], scope?: 'branch'): EngineEvent => ({
  type: 'judge.finished',
  ...(scope ? { scope } : {}),
  code: null,
  blast_radius: { files_touched: files.length, lines_added: 7, lines_deleted: 1, new_files: 0 },
  blast_radius_line: `${files.length} files`,
  violations: [],
  touched_paths: files,
});

const verify = (id: string, exit: number): EngineEvent[] => [
  { type: 'verify.started', template_id: id, phase: 'fast', cmd: 'node', args: ['-e', '0'] },
  {
    type: 'verify.finished',
    template_id: id,
    phase: 'fast',
    cmd: 'node',
    args: ['-e', '0'],
    exit_code: exit,
    timed_out: false,
    duration_ms: 20,
    summary: `exit ${exit}`,
  },
];

describe('panels during the implementation', () => {
  test('the next tick keeps the last blast radius and verifications until its own arrive', () => {
    const s = new Script().emit([
      started,
      enter('IMPLEMENTATION'),
      { type: 'run.started', run_id: 'r1', command: 'tick', project: 'demo' },
      judged(['src/a.ts']),
      ...verify('unit', 0),
      ...verify('lint', 0),
      { type: 'run.started', run_id: 'r2', command: 'tick', project: 'demo' },
    ]);
    const blast = renderPanel(<BlastRadius state={s.state} width={60} height={7} />).frame();
    expect(blast).not.toContain('nothing judged yet');
    expect(blast).toContain('src/a.ts');
    s.emit([judged(['src/b.ts']), ...verify('unit', 1)]);
    const after = renderPanel(<BlastRadius state={s.state} width={60} height={7} />).frame();
    expect(after).toContain('src/b.ts');
    // Three ran: the count says three, two passed and one failed.
    const verifications = renderPanel(<Verifications state={s.state} width={80} height={7} />).frame();
    expect(verifications).toContain('3 run · 2 passed · 1 failed');
  });

  test("the header counts a workflow's ticks (a workflow has no loop.tick to count them by)", () => {
    const s = new Script().emit([started, enter('IMPLEMENTATION')]);
    for (const [n, run] of ['r1', 'r2', 'r3'].entries()) {
      s.emit([
        { type: 'run.started', run_id: run, command: 'tick', project: 'demo' },
        { type: 'phase.changed', phase: 'BUILD' },
      ]);
      expect(phaseLabel(s.state)).toBe(`IMPLEMENTATION · tick ${n + 1}, step BUILD`);
    }
  });

  test('the whole branch at the QA gate, named as such', () => {
    const s = new Script().emit([started, enter('QA'), judged(['specs/QA_REPORT.md'])]);
    s.emit([
      enter('AWAITING_QA_VALIDATION', 'waiting'),
      judged(['src/a.ts', 'src/b.ts', 'specs/QA_REPORT.md'], 'branch'),
    ]);
    const frame = renderPanel(<BlastRadius state={s.state} width={70} height={8} />).frame();
    expect(frame).toContain('whole branch: 3 files');
    expect(frame).toContain('src/a.ts');
    expect(frame).toContain('what the branch holds');
  });
});
