import { describe, expect, test, vi } from 'vitest';

vi.hoisted(() => {
  delete process.env.CI;
});

import type { EngineEvent } from '../../source/engine/events.js';
import { createUiStore } from '../../source/ui/store/create-store.js';
import { renderApp, Script } from './helpers.js';

// Text the app shows comes from models (TASKS.md titles written by the spec agent, what an agent
// claimed, a planner's question), the PRD and git. A model can print escape sequences: none may
// reach the terminal, whichever panel shows the text.

const OSC52 = '\u001b]52;c;cm0gLXJmIH4vKg==\u0007'; // writes the clipboard
const CLEAR = '\u001b[2J\u001b[H'; // clears the screen, cursor home
const BELL = '\u0007';
const CR = '\r';

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the escapes the app must never print
const FOREIGN = /\u001b\]|\u001b\[2J|\u001b\[H|\u0007|\r|\u009b/;

const hostile: EngineEvent[] = [
  {
    type: 'workflow.started',
    project: `demo${BELL}`,
    prd_title: `Todo${OSC52} app`,
    base_branch: 'main',
    feature_branch: `ralphy/todo${CLEAR}`,
    engine: 'ticks',
    resumed_from: null,
    max_cost_usd: 5,
    tasks: [
      { number: 1, title: `Parse${CLEAR} PRD`, status: 'pending' },
      { number: 2, title: `Render${OSC52} list${CR}`, status: 'pending' },
    ],
  },
  { type: 'workflow.changed', state: 'IMPLEMENTATION', status: 'running', reason: null, detail: null },
  {
    type: 'task.updated',
    number: 1,
    title: `Parse${CLEAR} PRD`,
    status: 'completed',
    // A carriage return keeps what a terminal would show: the text after it.
    claimed: `not yet${CR}done${BELL}${OSC52}`,
    verified: `SUCCESS${BELL}\u009b2J`,
  },
  {
    type: 'gate.requested',
    gate: 'qa',
    title: `Approve${OSC52}?`,
    lines: [`  summary${CLEAR}`, `  ${BELL}tests pass`],
    answer: 'yes_no',
  },
  { type: 'budget.warning', warnings: [`cost ${OSC52}80%`] },
];

/** Every string anywhere in `value`. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value && typeof value === 'object') return Object.values(value).flatMap(strings);
  return [];
}

describe('hostile text from models', () => {
  test('is stripped where it enters the state: no control character in any field', () => {
    const s = new Script().emit(hostile);
    const { state } = s;
    for (const text of strings(state)) expect(text).not.toMatch(CONTROL);
    expect(state.header.title).toBe('Todo app');
    expect(state.header.branch).toBe('ralphy/todo');
    expect(state.tasks.map((t) => t.title)).toEqual(['Parse PRD', 'Render list']);
    expect(state.tasks[0]).toMatchObject({ claimed: 'done', verified: 'SUCCESS' });
    expect(state.gate).toMatchObject({ title: 'Approve?', lines: ['  summary', '  tests pass'] });
  });

  test('in a loop too: the task, the tick result, the ledger', () => {
    const s = new Script('loop').emit([
      { type: 'run.started', run_id: 'r1', command: 'loop', project: `demo${CLEAR}` },
      {
        type: 'task.proposed',
        task_id: `T1${BELL}`,
        milestone_id: `M1${OSC52}`,
        task_kind: 'execute',
        intent: `Change a${CLEAR}`,
        mode: 'claude_code',
      },
      {
        type: 'tick.finished',
        run_id: 'r1',
        verdict: 'stop',
        code: 'STOP_SCOPE_VIOLATION',
        remediation: `Narrow the scope${BELL}`,
        detail: `touched ${OSC52}src/x.ts`,
        blast_radius_line: '1 files, +1/-0, 0 new',
        commit: null,
        report_path: `relais/REPORT.md${CR}`,
      },
    ] as EngineEvent[]);
    for (const text of strings(s.state)) expect(text).not.toMatch(CONTROL);
    expect(s.state.proposed).toMatchObject({ taskId: 'T1', milestone: 'M1', intent: 'Change a' });
  });

  test('the project name the store starts with (a directory name) is made safe too', async () => {
    // engine-session passes basename(cwd): a directory may be named with any byte but `/`.
    const store = createUiStore({ view: 'workflow', project: `evil${OSC52}${CLEAR}dir${BELL}\nname` });
    const { state } = store.getSnapshot();
    expect(state.header.project).not.toMatch(CONTROL);
    expect(state.header.project).toBe('evildir ⏎ name');
    const app = renderApp(store, { columns: 120, rows: 40 });
    await app.waitFor('evildir');
    expect(app.rawFrame()).not.toMatch(FOREIGN);
    app.unmount();
    store.dispose();
  });

  test('never reaches the terminal through the panels', async () => {
    const s = new Script().emit(hostile);
    const app = renderApp(s.store, { columns: 120, rows: 40 });
    s.store.flush();
    await app.waitFor('Approve?');
    expect(app.frame()).toContain('"Todo app"');
    expect(app.frame()).toContain('Parse PRD');
    expect(app.rawFrame()).not.toMatch(FOREIGN);
    app.unmount();
  });
});
