import { afterEach, describe, expect, test, vi } from 'vitest';

vi.hoisted(() => {
  delete process.env.CI;
});

import type { EngineEvent, StampedEvent, WorkflowStartedEvent } from '../../source/engine/events.js';
import { ALL_CODES, verdictOf } from '../../source/engine/protocol/codes.js';
import { Tasks } from '../../source/ui/panels/Tasks.js';
import { createUiStore } from '../../source/ui/store/create-store.js';
import type { TestProject } from '../support/project.js';
import { task } from '../support/project.js';
import {
  happyScenario,
  runInProcess,
  scriptedGates,
  workflowFile,
  workflowProject,
  YES,
} from '../support/workflow.js';
import { renderApp, renderPanel, Script } from './helpers.js';

// Issue 16 item 1: "verified" in the Tasks panel, and every count of it, derives from the runner's
// verdict alone. A STOP or BLOCKED verdict must never render as a ✓, in a fresh run or a resumed one.

const STOP_AND_BLOCKED = ALL_CODES.filter((code) => verdictOf(code) !== 'success');
// ink-testing-library's terminal is 100 columns wide: the sizes a user tried, up to that.
const SIZES: ReadonlyArray<readonly [number, number]> = [
  [100, 35],
  [80, 24],
  [60, 15],
];

/** Lines of a frame that mention `text`. */
const linesWith = (frame: string, text: string) => frame.split('\n').filter((l) => l.includes(text));

const started = (tasks: WorkflowStartedEvent['tasks']): EngineEvent => ({
  type: 'workflow.started',
  project: 'demo',
  prd_title: 'Todo app',
  base_branch: 'main',
  feature_branch: 'ralphy/todo',
  engine: 'ticks',
  resumed_from: null,
  max_cost_usd: null,
  tasks,
});

const implementing: EngineEvent = {
  type: 'workflow.changed',
  state: 'IMPLEMENTATION',
  status: 'running',
  reason: null,
  detail: null,
};

describe('the Tasks panel shows the runner verdict, nothing else', () => {
  test.each(STOP_AND_BLOCKED)('%s with the agent claiming done renders no ✓ anywhere', (code) => {
    const s = new Script().emit([
      started([
        { number: 1, title: 'Parse PRD', status: 'pending' },
        { number: 2, title: 'Render list', status: 'pending' },
      ]),
      implementing,
      {
        type: 'task.updated',
        number: 1,
        title: 'Parse PRD',
        status: 'in_progress',
        claimed: 'done, all tests pass',
        verified: `${code}: src/b.ts is outside the task scope`,
        verdict: 'rejected',
      },
    ]);
    s.store.flush();
    for (const [columns, rows] of SIZES) {
      const app = renderApp(s.store, { columns, rows });
      const frame = app.frame();
      const row = linesWith(frame, 'Parse PRD');
      if (columns === 100) expect(row.length, `${columns}×${rows}:\n${frame}`).toBeGreaterThan(0);
      for (const line of row) expect(line, `${columns}×${rows}`).not.toContain('✓');
      expect(frame).not.toMatch(/[1-9]\/2 verified/);
      app.unmount();
    }
  });

  test('a verified text without the runner verdict is not a ✓ either (no verdict means not done)', () => {
    const s = new Script().emit([
      started([{ number: 1, title: 'Parse PRD', status: 'pending' }]),
      {
        type: 'task.updated',
        number: 1,
        title: 'Parse PRD',
        status: 'completed',
        claimed: 'done',
        verified: 'SUCCESS a1b2c3d',
      },
    ]);
    const frame = renderPanel(<Tasks state={s.state} width={90} height={5} />).frame();
    expect(linesWith(frame, 'Parse PRD')[0]).not.toContain('✓');
    expect(frame).toContain('0/1 verified');
  });

  test('a resumed run shows the verdicts WORKFLOW.json kept: rejected stays rejected', () => {
    const s = new Script().emit([
      {
        ...started([
          {
            number: 1,
            title: 'Parse PRD',
            status: 'completed',
            claimed: 'done',
            verified: 'SUCCESS a1b2c3d',
            verdict: 'verified',
          },
          {
            number: 2,
            title: 'Render list',
            status: 'in_progress',
            claimed: 'done',
            verified: 'STOP_SCOPE_VIOLATION_OUTSIDE_ALLOWED: src/b.ts',
            verdict: 'rejected',
          },
        ]),
        resumed_from: 'IMPLEMENTATION',
        cost_usd: 1.25,
      } as EngineEvent,
    ]);
    const frame = renderPanel(<Tasks state={s.state} width={100} height={6} />).frame();
    expect(linesWith(frame, 'Parse PRD')[0]).toMatch(/✓\s+1 Parse PRD.*runner: SUCCESS a1b2c3d/);
    expect(linesWith(frame, 'Render list')[0]).not.toContain('✓');
    expect(linesWith(frame, 'Render list')[0]).toContain('not accepted: STOP_SCOPE');
    expect(frame).toContain('1/2 verified');
    // The resume goes on from what was spent, not from $0 (item 6).
    expect(s.state.header.costUsd).toBe(1.25);
  });
});

describe('with the real engine: a builder that writes outside its scope', () => {
  let project: (TestProject & { ghLog: string; remote: string }) | null = null;
  afterEach(() => {
    project?.dispose();
    project = null;
  });

  /** Every frame of the Tasks panel while the events arrive, at two widths. */
  function checkEveryFrame(events: readonly StampedEvent[]): { frames: number } {
    const store = createUiStore({ view: 'workflow', project: 'demo' });
    let frames = 0;
    for (const event of events) {
      store.dispatch(event);
      store.flush();
      const state = store.getSnapshot().state;
      if (state.tasks.length === 0) continue;
      for (const width of [44, 100]) {
        const frame = renderPanel(<Tasks state={state} width={width} height={6} />).frame();
        frames++;
        // The runner never verified anything in this run: no ✓, no "1/1 verified", on any frame.
        expect(frame, `after ${event.type}`).not.toContain('✓');
        expect(frame).toMatch(/ 0\/\d+ verified/);
      }
    }
    store.dispose();
    return { frames };
  }

  test('fresh and resumed: every frame of the Tasks panel says not verified', async () => {
    project = workflowProject((config) => {
      config.workflow.max_ticks_per_task = 1;
    });
    const outside = task({
      task_id: 'T1',
      scope: {
        allowed_globs: ['src/a.ts'],
        forbidden_globs: [],
        allow_new_files: false,
        allow_lockfile_changes: false,
      },
    });
    const cheat = {
      actions: [{ write: 'src/b.ts', content: 'sneaky\n' }],
      result_json: { summary: 'done', files_intended: ['src/a.ts'], commands_ran: [], notes: [] },
    };
    const scenario = happyScenario();
    scenario.orchestrator = [{ result_json: outside }, { result_json: outside }];
    scenario.builder = [cheat, cheat];
    project.scenario(scenario);
    const fresh = await runInProcess(project, { gates: scriptedGates({ spec: YES }) });
    expect(fresh.outcome).toMatchObject({ state: 'FAILED', reason: 'tick_stopped' });
    expect(fresh.events.some((e) => e.type === 'tick.finished' && e.verdict === 'stop')).toBe(true);
    expect(checkEveryFrame(fresh.events).frames).toBeGreaterThan(4);
    expect(workflowFile(project).tasks[0]).toMatchObject({ verdict: 'rejected' });

    const resumed = await runInProcess(project, { gates: scriptedGates({ resume: YES, spec: YES }) });
    const start = resumed.events.find((e) => e.type === 'workflow.started');
    expect(start).toMatchObject({ resumed_from: 'IMPLEMENTATION' });
    expect(checkEveryFrame(resumed.events).frames).toBeGreaterThan(2);
  }, 300_000);

  test('a SUCCESS step that changed nothing: every frame says not verified, the last "not accepted: no change"', async () => {
    project = workflowProject((config) => {
      config.workflow.max_ticks_per_task = 1;
    });
    // The newcomer's defect 1: green tests, no edit, a claim of success.
    const scenario = happyScenario();
    scenario.orchestrator = [{ result_json: task({ task_id: 'T1' }) }];
    scenario.builder = [
      {
        result_json: {
          summary: 'Added the exclamation mark; all tests pass',
          files_intended: [],
          commands_ran: [],
          notes: [],
        },
      },
    ];
    project.scenario(scenario);
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES }) });
    expect(run.events.some((e) => e.type === 'tick.finished' && e.code === 'SUCCESS')).toBe(true);
    expect(checkEveryFrame(run.events).frames).toBeGreaterThan(4);
    const store = createUiStore({ view: 'workflow', project: 'demo' });
    for (const event of run.events) store.dispatch(event);
    store.flush();
    const frame = renderPanel(<Tasks state={store.getSnapshot().state} width={100} height={6} />).frame();
    store.dispose();
    expect(linesWith(frame, 'Greet by name')[0]).toContain('not accepted: no change');
  }, 300_000);
});
