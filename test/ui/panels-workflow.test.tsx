import { describe, expect, test, vi } from 'vitest';
import { outputLinesOf } from '../../source/ui/store/output-lines.js';

vi.hoisted(() => {
  delete process.env.CI;
  // Chalk decides its colour level when imported: without this, a piped test run has none and a
  // colour assertion could not fail. Panels rendered without colours use the NO_COLOR palette.
  process.env.FORCE_COLOR = '1';
});

import type { EngineEvent } from '../../source/engine/events.js';
import { timeOfDay } from '../../source/ui/format/time.js';
import { AgentOutput } from '../../source/ui/panels/AgentOutput.js';
import { BlastRadius } from '../../source/ui/panels/BlastRadius.js';
import { BreakerPanel } from '../../source/ui/panels/BreakerPanel.js';
import { Footer } from '../../source/ui/panels/Footer.js';
import { GatePanel } from '../../source/ui/panels/GatePanel.js';
import { Header } from '../../source/ui/panels/Header.js';
import { PhaseTimeline } from '../../source/ui/panels/PhaseTimeline.js';
import { ResultPanel } from '../../source/ui/panels/ResultPanel.js';
import { Tasks } from '../../source/ui/panels/Tasks.js';
import { Verifications } from '../../source/ui/panels/Verifications.js';
import { WaitCountdown } from '../../source/ui/panels/WaitCountdown.js';
import { enter, renderPanel, Script, T0 } from './helpers.js';

const workflowStarted: EngineEvent = {
  type: 'workflow.started',
  project: 'demo',
  prd_title: 'Todo app',
  base_branch: 'main',
  feature_branch: 'ralphy/todo',
  engine: 'ticks',
  resumed_from: null,
  max_cost_usd: 5,
  tasks: [
    { number: 1, title: 'Parse PRD', status: 'pending' },
    { number: 2, title: 'Render list', status: 'pending' },
    { number: 3, title: 'Persist items', status: 'pending' },
  ],
};

/** An error line in red (SGR 31) from its marker to its text, with no colour reset between. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape sequences is the point
const RED_ERROR = /\u001b\[31m(?:(?!\u001b\[39m).)*✗(?:(?!\u001b\[39m).)*boom/;

/** Lines of a frame that mention `text`. */
const lineWith = (frame: string, text: string) => frame.split('\n').find((l) => l.includes(text)) ?? '';

describe('Header', () => {
  test('project, branch, phase, elapsed, spend against the budget, aborting', () => {
    const s = new Script().emit(workflowStarted).emit(enter('SPECIFICATION'), 192_000);
    s.emit({
      type: 'agent.finished',
      role: 'spec',
      ok: true,
      exit_code: 0,
      cost_usd: 0.42,
      duration_ms: 1,
      summary: '',
    });
    // Issue 16 item 7: the header shows what the runner recorded (WORKFLOW.json), not the agents' sum.
    s.emit({
      type: 'workflow.spend',
      phase: 'SPECIFICATION',
      cost_usd: 0.42,
      calls: 1,
      max_cost_usd: null,
      max_calls: null,
      total_cost_usd: 0.42,
    });
    s.wait(0);
    const view = renderPanel(<Header state={s.state} width={100} />);
    expect(view.frame()).toContain(
      'ralphy  demo · "Todo app" · ralphy/todo · SPECIFICATION · 03:12 · $0.4200 / $5.00 (8%)',
    );
    s.store.setInteraction({ aborting: true });
    view.rerender(<Header state={s.state} width={100} />);
    expect(view.frame()).toContain('ABORTING');
  });

  test('never wider than the terminal', () => {
    const s = new Script().emit({
      ...workflowStarted,
      prd_title: 'A very long product requirement title '.repeat(5),
    });
    const view = renderPanel(<Header state={s.state} width={60} />);
    for (const line of view.frame().split('\n')) expect([...line].length).toBeLessThanOrEqual(60);
  });
});

describe('PhaseTimeline', () => {
  test('done phases with durations, a spinner on the running one, gate decisions under their phase', () => {
    const s = new Script()
      .emit(workflowStarted)
      .emit(enter('SPECIFICATION'), 62_000)
      .emit(enter('AWAITING_SPEC_VALIDATION', 'waiting'), 12_000)
      .emit({ type: 'gate.resolved', gate: 'spec', decision: 'approve', by: 'human', answer: null })
      .emit(enter('IMPLEMENTATION'), 130_000);
    s.wait(0);
    const view = renderPanel(<PhaseTimeline state={s.state} width={50} height={12} />);
    const frame = view.frame();
    expect(lineWith(frame, 'SPECIFICATION ')).toMatch(/✓ SPECIFICATION\s+1m02s/);
    expect(lineWith(frame, 'AWAITING_SPEC')).toMatch(/✓ AWAITING_SPEC_VALIDATION\s+12s/);
    expect(frame).toContain('└ spec: approved');
    expect(lineWith(frame, 'IMPLEMENTATION')).toMatch(/⠿ IMPLEMENTATION\s+2m10s/);
    expect(lineWith(frame, ' QA ')).toContain('○ QA');
    expect(frame).toContain('2/6');
  });

  test('a waiting gate phase, then FAILED with its reason', () => {
    const s = new Script().emit([
      workflowStarted,
      enter('SPECIFICATION'),
      enter('AWAITING_SPEC_VALIDATION', 'waiting'),
    ]);
    const view = renderPanel(<PhaseTimeline state={s.state} width={50} height={12} />);
    expect(lineWith(view.frame(), 'AWAITING_SPEC')).toContain('◇ AWAITING_SPEC_VALIDATION');
    s.emit({ type: 'workflow.changed', state: 'FAILED', status: 'failed', reason: 'aborted', detail: null });
    view.rerender(<PhaseTimeline state={s.state} width={50} height={12} />);
    expect(lineWith(view.frame(), 'AWAITING_SPEC')).toContain('✗ AWAITING_SPEC_VALIDATION');
    expect(view.frame()).toContain('✗ FAILED · aborted');
  });

  test('a gate nobody could answer shows as unanswered, never as a rejection', () => {
    const s = new Script().emit([
      workflowStarted,
      enter('SPECIFICATION'),
      enter('AWAITING_SPEC_VALIDATION', 'waiting'),
      { type: 'gate.resolved', gate: 'spec', decision: 'reject', by: 'nobody', answer: null },
    ]);
    const frame = renderPanel(<PhaseTimeline state={s.state} width={50} height={12} />).frame();
    expect(frame).toContain('└ spec: nobody could answer');
    expect(frame).not.toContain('rejected');
    const line = outputLinesOf({
      type: 'gate.resolved',
      gate: 'spec',
      decision: 'reject',
      by: 'nobody',
      answer: null,
      at: new Date(0).toISOString(),
    });
    expect(line.map((l) => l.text)).toEqual(['spec gate: nobody could answer']);
  });

  test('many plan-gate notes: the phases and the end stay, the oldest notes go first', () => {
    const s = new Script().emit([workflowStarted, enter('PLANNING', 'waiting')]);
    for (let round = 1; round <= 15; round++)
      s.emit({
        type: 'gate.resolved',
        gate: 'plan',
        decision: 'answer',
        by: 'human',
        answer: `round ${round}`,
      });
    s.emit([enter('SPECIFICATION'), enter('AWAITING_SPEC_VALIDATION', 'waiting')]);
    s.emit({ type: 'gate.resolved', gate: 'spec', decision: 'approve', by: 'human', answer: null });
    s.emit({ type: 'workflow.changed', state: 'FAILED', status: 'failed', reason: 'aborted', detail: null });
    // 7 phases and the end in 12 rows: 4 rows are left for the 16 notes.
    const view = renderPanel(<PhaseTimeline state={s.state} width={50} height={14} />);
    const frame = view.frame();
    expect(frame.split('\n')).toHaveLength(14);
    for (const phase of ['PLANNING', 'SPECIFICATION', 'AWAITING_SPEC', 'IMPLEMENTATION', ' QA ', ' PR '])
      expect(frame).toContain(phase);
    expect(frame).toContain('✗ FAILED · aborted');
    expect(frame).toContain('… 13 earlier notes');
    expect(frame).toContain('plan: answered: round 14');
    expect(frame).toContain('plan: answered: round 15');
    expect(frame).toContain('spec: approved');
    expect(frame).not.toContain('round 13');
    expect(lineWith(frame, 'earlier notes').indexOf('└')).toBe(lineWith(frame, 'round 14').indexOf('└'));
  });

  test('fewer rows than phases: every phase shows in its compact form (issue 16 item 4)', () => {
    const s = new Script().emit([workflowStarted, enter('SPECIFICATION'), enter('AWAITING_SPEC_VALIDATION')]);
    const view = renderPanel(<PhaseTimeline state={s.state} width={50} height={5} />);
    const frame = view.frame();
    expect(frame.split('\n')).toHaveLength(5);
    // Six phases on two rows of 46 columns, each with its state: done, waiting, pending.
    expect(frame).toMatch(/✓ spec\s/);
    expect(frame).toContain('spec gate');
    for (const name of ['build', 'QA', 'QA gate', 'PR']) expect(frame).toContain(`○ ${name}`);
    expect(frame).not.toContain('more');
  });
});

describe('BreakerPanel', () => {
  const breaker = (state: 'closed' | 'half_open' | 'open' | 'paused', attempts: number): EngineEvent => ({
    type: 'breaker.changed',
    breaker: { state, attempts, max_attempts: 3, last_trigger: attempts > 0 ? 'inactivity' : null },
    trigger: attempts > 0 && state !== 'paused' ? 'inactivity' : null,
    detail: attempts > 0 && state !== 'paused' ? 'inactivity detected (60s without output)' : null,
    log: [],
  });

  test('closed -> half-open -> open -> paused, with attempts, trigger and silence', () => {
    const s = new Script()
      .emit({ type: 'agent.started', role: 'dev', attempt: 1, command: 'claude', model: 'sonnet' })
      .emit({ type: 'agent.output', role: 'dev', text: 'hello', kind: 'text' }, 4_000);
    s.wait(0);
    const view = renderPanel(<BreakerPanel state={s.state} width={60} height={6} />);
    expect(view.frame()).toContain('● closed · no trip so far');
    expect(view.frame()).toContain('output 4s ago · activity 4s ago');

    s.emit(breaker('half_open', 1));
    view.rerender(<BreakerPanel state={s.state} width={60} height={6} />);
    expect(view.frame()).toContain('◐ half-open · attempts 1/3');
    expect(view.frame()).toContain('last trigger: inactivity detected (60s without output)');

    s.emit(breaker('open', 3));
    view.rerender(<BreakerPanel state={s.state} width={60} height={6} />);
    expect(view.frame()).toContain('● OPEN · attempts 3/3');

    s.emit(breaker('paused', 3));
    view.rerender(<BreakerPanel state={s.state} width={60} height={6} />);
    expect(view.frame()).toContain('paused (waiting for a human)');
  });

  test('an API retry shows as liveness', () => {
    const s = new Script().emit({
      type: 'agent.retry',
      role: 'dev',
      attempt: 2,
      max_retries: 10,
      error: 'rate_limit',
      retry_delay_ms: 5000,
    });
    const view = renderPanel(<BreakerPanel state={s.state} width={60} height={6} />);
    expect(view.frame()).toContain('↻ API retry 2/10 (rate_limit)');
  });
});

describe('Tasks', () => {
  test('claimed but not verified is never shown as done; verified is', () => {
    const s = new Script()
      .emit(workflowStarted)
      .emit({
        type: 'task.updated',
        number: 1,
        title: 'Parse PRD',
        status: 'completed',
        claimed: 'done',
        verified: 'SUCCESS a1b2c3d',
        verdict: 'verified',
      })
      .emit({
        type: 'task.updated',
        number: 2,
        title: 'Render list',
        status: 'completed',
        claimed: 'done',
        verified: null,
      })
      .emit({
        type: 'task.updated',
        number: 3,
        title: 'Persist items',
        status: 'in_progress',
        claimed: null,
        verified: null,
      });
    const view = renderPanel(<Tasks state={s.state} width={90} height={6} />);
    const frame = view.frame();
    expect(lineWith(frame, 'Parse PRD')).toMatch(/✓\s+1 Parse PRD.*agent: done.*runner: SUCCESS a1b2c3d/);
    expect(lineWith(frame, 'Render list')).toMatch(/◐\s+2 Render list.*agent: done.*runner: not verified/);
    expect(lineWith(frame, 'Persist items')).toMatch(/⠿\s+3 Persist items.*runner: not verified/);
    expect(frame).toContain('1/3 verified');
  });

  test('a narrow panel keeps both marks apart', () => {
    const s = new Script().emit(workflowStarted).emit({
      type: 'task.updated',
      number: 2,
      title: 'Render list',
      status: 'completed',
      claimed: 'done',
      verified: null,
    });
    const view = renderPanel(<Tasks state={s.state} width={44} height={6} />);
    // The agent's claim is ◐, never ✓: that mark belongs to the runner's verdict alone.
    expect(lineWith(view.frame(), 'Render list')).toMatch(/◐\s+2 Render list\s+agent ◐ runner ✗/);
  });
});

describe('BlastRadius', () => {
  test('nothing judged, then files, lines, new files and violations with their code', () => {
    const s = new Script();
    const view = renderPanel(<BlastRadius state={s.state} width={60} height={7} />);
    expect(view.frame()).toContain('nothing judged yet');
    s.emit({
      type: 'judge.finished',
      code: 'STOP_SCOPE_VIOLATION_FORBIDDEN',
      blast_radius: { files_touched: 3, lines_added: 1200, lines_deleted: 14, new_files: 1 },
      blast_radius_line: '3 files, +1200/-14, 1 new',
      violations: ['forbidden: .env'],
      touched_paths: ['src/a.ts', '.env', 'src/b.ts'],
    });
    view.rerender(<BlastRadius state={s.state} width={60} height={7} />);
    const frame = view.frame();
    expect(frame).toContain('3 files · +1,200 −14 · 1 new');
    expect(frame).toContain('✗ STOP_SCOPE_VIOLATION_FORBIDDEN');
    expect(frame).toContain('forbidden: .env');
    expect(frame).toContain('touched: src/a.ts, .env, src/b.ts');
  });

  test("a write the scope hook refused shows beside 'scope ok' (the newcomer's pass, defect 27)", () => {
    const judged = (refused_writes?: number) =>
      new Script().emit({
        type: 'judge.finished',
        code: null,
        blast_radius: { files_touched: 0, lines_added: 0, lines_deleted: 0, new_files: 0 },
        blast_radius_line: '0 files, +0/-0, 0 new',
        violations: [],
        touched_paths: [],
        ...(refused_writes === undefined ? {} : { refused_writes }),
      });
    const refused = renderPanel(<BlastRadius state={judged(1).state} width={60} height={5} />).frame();
    expect(refused).toContain('0 files · +0 −0 · 0 new');
    expect(refused).toContain('✓ scope ok · 1 write refused');
    const two = renderPanel(<BlastRadius state={judged(2).state} width={60} height={5} />).frame();
    expect(two).toContain('2 writes refused');
    for (const none of [judged(0), judged()]) {
      const frame = renderPanel(<BlastRadius state={none.state} width={60} height={5} />).frame();
      expect(frame).toContain('✓ scope ok');
      expect(frame).not.toContain('refused');
    }
  });
});

describe('Verifications', () => {
  test('running -> passed and running -> failed, with exit codes and durations', () => {
    const s = new Script()
      .emit({ type: 'verify.started', template_id: 'lint', phase: 'fast', cmd: 'npm', args: ['run', 'lint'] })
      .emit(
        { type: 'verify.started', template_id: 'unit', phase: 'slow', cmd: 'npm', args: ['test'] },
        3_000,
      );
    s.wait(0);
    const view = renderPanel(<Verifications state={s.state} width={80} height={5} />);
    expect(lineWith(view.frame(), 'lint')).toMatch(/⠿ fast\s+lint\s+running\s+3\.0s\s+npm run lint/);
    const done = (template_id: string, phase: 'fast' | 'slow', exit_code: number): EngineEvent => ({
      type: 'verify.finished',
      summary: '',
      template_id,
      phase,
      cmd: 'npm',
      args: [],
      exit_code,
      duration_ms: 3200,
      timed_out: false,
    });
    s.emit([done('lint', 'fast', 0), done('unit', 'slow', 1)]);
    view.rerender(<Verifications state={s.state} width={80} height={5} />);
    expect(lineWith(view.frame(), 'lint')).toMatch(/✓ fast\s+lint\s+exit 0\s+3\.2s/);
    expect(lineWith(view.frame(), 'unit')).toMatch(/✗ slow\s+unit\s+exit 1\s+3\.2s/);
    expect(view.frame()).toContain('run · 1 passed · 1 failed');
  });
});

describe('GatePanel', () => {
  test('a yes/no gate shows what is being approved and its keys', () => {
    const s = new Script().emit({
      type: 'gate.requested',
      gate: 'spec',
      title: 'Approve the specification?',
      lines: ['3 tasks:', '1. Parse PRD', '2. Render list', '3. Persist items'],
      answer: 'yes_no',
    });
    const view = renderPanel(<GatePanel state={s.state} width={60} height={9} />);
    const frame = view.frame();
    expect(frame).toContain('Approve the specification?');
    expect(frame).toContain('spec gate');
    for (const line of ['3 tasks:', '1. Parse PRD', '3. Persist items']) expect(frame).toContain(line);
    expect(frame).toMatch(/y\s+approve\s+n\s+reject/);
  });

  test('a long list scrolls inside the gate, says how much is below, and the keys stay visible', () => {
    const lines = Array.from({ length: 40 }, (_, i) => `${i + 1}. task`);
    const s = new Script().emit({
      type: 'gate.requested',
      gate: 'qa',
      title: 'Approve QA?',
      lines,
      answer: 'yes_no',
    });
    const view = renderPanel(<GatePanel state={s.state} width={60} height={8} />);
    expect(view.frame()).toMatch(/↓ \d+ more \(PgDn\)/);
    expect(view.frame()).toMatch(/y\s+approve/);
  });

  test('a text gate shows the question, the typed answer over several lines, and how to send it', () => {
    const s = new Script().emit({
      type: 'gate.requested',
      gate: 'input',
      title: 'dev-agent needs input',
      lines: ['Which database should I use?'],
      answer: 'text',
    });
    s.store.setInteraction({ draft: 'SQLite,\nin a file' });
    const view = renderPanel(<GatePanel state={s.state} width={60} height={9} />);
    const frame = view.frame();
    expect(frame).toContain('Which database should I use?');
    expect(frame).toContain('› SQLite,');
    expect(frame).toContain('in a file▌');
    expect(frame).toContain('Enter send · Ctrl-J new line · Esc decline');
  });
});

describe('WaitCountdown', () => {
  test('counts down to the reset time as the clock ticks (fake timers)', () => {
    vi.useFakeTimers({ now: T0 });
    try {
      const s = new Script();
      s.timers.nowMs = T0;
      const until = T0 + 4 * 60_000 + 12_000;
      s.emit({
        type: 'workflow.waiting',
        until: new Date(until).toISOString(),
        reason: 'usage limit reached',
      });
      const view = renderPanel(<WaitCountdown state={s.state} width={60} height={4} />);
      expect(view.frame()).toContain(`resumes in 4m12s (at ${timeOfDay(until)})`);
      expect(view.frame()).toContain('usage limit reached');
      s.wait(60_000);
      view.rerender(<WaitCountdown state={s.state} width={60} height={4} />);
      expect(view.frame()).toContain('resumes in 3m12s');
      s.wait(200_000);
      view.rerender(<WaitCountdown state={s.state} width={60} height={4} />);
      expect(view.frame()).toContain('resuming…');
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('AgentOutput', () => {
  test('text, tool calls as one readable line, errors and retries highlighted', () => {
    const s = new Script()
      .emit({ type: 'agent.started', role: 'dev', attempt: 2, command: 'claude', model: 'sonnet' })
      .emit({ type: 'agent.output', role: 'dev', text: 'Reading the code\nthen editing', kind: 'text' })
      .emit({ type: 'agent.tool', role: 'dev', tool: 'Edit', target: 'src/app.ts' })
      .emit({ type: 'agent.tool', role: 'dev', tool: 'Bash', target: 'npm test\n-- --run' })
      .emit({ type: 'agent.output', role: 'dev', text: 'Tool failed: ENOENT', kind: 'error' })
      .emit({
        type: 'agent.retry',
        role: 'dev',
        attempt: 1,
        max_retries: 10,
        error: 'overloaded',
        retry_delay_ms: 2000,
      });
    const view = renderPanel(<AgentOutput output={s.snapshot.output} agent="dev" width={70} height={10} />);
    const frame = view.frame();
    expect(frame).toContain('── dev started · model sonnet · attempt 2');
    expect(frame).toContain('Reading the code');
    expect(frame).toContain('then editing');
    expect(frame).toContain('▸ Edit src/app.ts');
    expect(frame).toContain('▸ Bash npm test ⏎ -- --run');
    expect(frame).toContain('✗ Tool failed: ENOENT');
    expect(frame).toContain('↻ API retry 1/10 (overloaded), next in 2.0s');
  });

  test('errors are coloured when colours are on', () => {
    const s = new Script().emit({ type: 'agent.output', role: 'dev', text: 'boom', kind: 'error' });
    const view = renderPanel(
      <AgentOutput output={s.snapshot.output} agent={null} width={40} height={4} />,
      true,
    );
    const line = lineWith(view.rawFrame(), 'boom');
    // The error line, marker and text, is red (SGR 31, not reset before the text), and nothing
    // else on the panel is.
    expect(line).toMatch(RED_ERROR);
    expect(
      view
        .rawFrame()
        .split('\n')
        .filter((l) => l.includes('\u001b[31m')),
    ).toEqual([line]);
    // Off, the same line has no colour at all.
    const off = renderPanel(<AgentOutput output={s.snapshot.output} agent={null} width={40} height={4} />);
    expect(lineWith(off.rawFrame(), 'boom')).not.toContain('\u001b[31m');
  });

  test('scrolled back, the top border says where the view is', () => {
    const s = new Script();
    for (let i = 0; i < 50; i++)
      s.emit({ type: 'agent.output', role: 'dev', text: `line ${i}`, kind: 'text' });
    s.store.scroll('page_up', 8);
    const view = renderPanel(<AgentOutput output={s.snapshot.output} agent={null} width={60} height={10} />);
    const frame = view.frame();
    expect(frame).toContain('line 42');
    expect(frame).not.toContain('line 49');
    expect(frame).toContain('↑35 ↓7 · End follows');
  });
});

describe('ResultPanel and Footer', () => {
  test('the result names the end state, the PR and next steps', () => {
    const s = new Script().emit({
      type: 'run.finished',
      state: 'COMPLETED',
      status: 'completed',
      reason: null,
      detail: null,
      pr_url: 'https://example.invalid/pr/1',
      next_steps: ['Review the PR'],
    });
    const result = s.state.result;
    if (!result) throw new Error('no result');
    const view = renderPanel(<ResultPanel result={result} width={70} height={6} />);
    expect(view.frame()).toContain('✓ Workflow COMPLETED');
    expect(view.frame()).toContain('Pull request: https://example.invalid/pr/1');
    expect(view.frame()).toContain('Next: Review the PR');
  });

  test('the footer lists only the keys that work now', () => {
    const s = new Script();
    const footer = () => renderPanel(<Footer state={s.state} width={120} />).frame();
    expect(footer()).toMatch(/a\s+abort.*\^C\s+stop/);
    expect(footer()).not.toContain('approve');
    s.emit({ type: 'gate.requested', gate: 'qa', title: 'QA?', lines: [], answer: 'yes_no' });
    expect(footer()).toMatch(/y\s+approve\s+n\s+reject/);
    s.store.setInteraction({ confirmingAbort: true });
    expect(footer()).toContain('Abort the running work?');
    s.store.setInteraction({ confirmingAbort: false, over: true });
    expect(footer()).toMatch(/q\s+quit/);
    expect(footer()).not.toContain('abort');
  });
});
