import { afterEach, describe, expect, it } from 'vitest';
import { scripted, verdict, writes } from '../support/cycle-project.js';
import { FakeClock } from '../support/fake-clock.js';
import type { TestProject } from '../support/project.js';
import {
  happyScenario,
  runInProcess,
  scriptedGates,
  workflowFile,
  workflowProject,
  YES,
} from '../support/workflow.js';

// `ralphy start` with `implementation_engine: "cycle"` (docs/ARCHITECTURE.md): TASKS.md becomes one deadf
// track; the spec and QA agents are the fake claude (real processes), the cycle's implementer and
// verifier are scripted in-process runners (no model can run here; the real codex and claude
// binaries drive the cycle in test/e2e/cycle-*.test.ts). Git, the six checks and the judge are real.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

function cycleProject() {
  return workflowProject((config) => {
    config.workflow.implementation_engine = 'cycle';
    config.cycle = { mode: 'yolo', verify: { tests: ['ok'], lint: [] } };
  });
}

describe('ralphy start with the cycle engine', () => {
  it('runs each TASKS.md task through generate, implement, verify, reflect, then QA and the PR', async () => {
    project = cycleProject();
    const scenario = happyScenario();
    scenario.orchestrator = [];
    scenario.builder = [];
    project.scenario(scenario);
    const { runners, calls } = scripted({
      implementer: [
        writes({ 'src/a.ts': 'export const greet = (n: string) => "Hello, " + n;\n' }),
        writes({ 'src/b.ts': 'export const bye = (n: string) => "Bye, " + n;\n' }),
      ],
      verifier: verdict('YES'),
    });
    const run = await runInProcess(project, {
      gates: scriptedGates({ spec: YES, qa: YES }),
      cycleRunners: () => runners,
    });
    expect(run.outcome, JSON.stringify(run.outcome)).toMatchObject({
      status: 'completed',
      state: 'COMPLETED',
    });
    expect(calls.map((c) => c.role)).toEqual(['implementer', 'verifier', 'implementer', 'verifier']);
    expect(run.events.some((e) => e.type === 'cycle.decided')).toBe(true);
    const log = project.git('log', '--format=%s', 'main..HEAD').trim().split('\n').reverse();
    expect(log).toEqual(
      expect.arrayContaining([
        'relais(T1): Greet by name',
        'relais(T2): Say goodbye',
        'ralphy: task 1 completed',
        'ralphy: task 2 completed',
      ]),
    );
    const workflow = workflowFile(project);
    expect(workflow.engine).toBe('cycle');
    expect(workflow.tasks.map((t: any) => t.status)).toEqual(['completed', 'completed']);
    expect(workflow.tasks[0].verified).toContain('six deterministic checks');
    expect(project.status()).toBe('');
  });

  it('a usage limit of a cycle agent is waited out (countdown, WORKFLOW.json waiting_until), never a failed attempt', async () => {
    project = cycleProject();
    const scenario = happyScenario();
    scenario.orchestrator = [];
    scenario.builder = [];
    project.scenario(scenario);
    const { runners, calls } = scripted({
      implementer: [
        () => ({ failure: "You've hit your session limit · resets 11am (UTC)" }),
        writes({ 'src/a.ts': 'export const greet = (n: string) => "Hello, " + n;\n' }),
        writes({ 'src/b.ts': 'export const bye = (n: string) => "Bye, " + n;\n' }),
      ],
      verifier: verdict('YES'),
    });
    const clock = new FakeClock(Date.parse('2026-11-22T10:00:00Z'));
    const slept: number[] = [];
    const waiting: Array<string | null> = [];
    let waitStarted = false;
    clock.onSleep = (ms) => {
      // Only the limit's wait passes at once; the phase timeouts keep their (fake) time.
      if (!waitStarted) return;
      waitStarted = false;
      slept.push(ms);
      // What WORKFLOW.json says while the wait runs: a resume knows the run is waiting, not stuck.
      waiting.push(workflowFile(project as TestProject).waiting_until);
      setImmediate(() => clock.advance(ms));
    };
    const run = await runInProcess(project, {
      gates: scriptedGates({ spec: YES, qa: YES }),
      cycleRunners: () => runners,
      clock,
      onEvent: (e) => {
        if (e.type === 'workflow.waiting') waitStarted = true;
      },
    });
    expect(run.outcome, JSON.stringify(run.outcome)).toMatchObject({ state: 'COMPLETED' });
    expect(run.events.find((e) => e.type === 'workflow.waiting')).toMatchObject({
      until: '2026-11-22T11:00:00.000Z',
    });
    expect(slept).toContain(60 * 60 * 1000);
    expect(waiting).toContain('2026-11-22T11:00:00.000Z');
    // The same call again after the wait: no retry, no failure recorded by the cycle.
    expect(calls.map((c) => c.role)).toEqual([
      'implementer',
      'implementer',
      'verifier',
      'implementer',
      'verifier',
    ]);
    const decided = run.events.flatMap((e) => (e.type === 'cycle.decided' ? [e.action] : []));
    expect(decided).not.toContain('retry_task');
    expect(workflowFile(project).waiting_until).toBeNull();
  }, 180_000); // a whole workflow in process: slow on a loaded machine, not a wait

  it('a cycle that needs a human stops the workflow (FAILED, cycle_stopped) with the reason', async () => {
    project = cycleProject();
    const scenario = happyScenario();
    project.scenario(scenario);
    const { runners } = scripted({
      implementer: [writes({ 'src/a.ts': 'export const greet = (n: string) => "Hello, " + n;\n' })],
      verifier: verdict('NEEDS_HUMAN'),
    });
    const run = await runInProcess(project, {
      gates: scriptedGates({ spec: YES, qa: YES }),
      cycleRunners: () => runners,
    });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'cycle_stopped' });
    expect(run.outcome.detail).toContain('needs_human');
    const status = project.cliSync(['status']);
    expect(status.stdout).toContain('Cycle: phase needs_human');
    expect(status.stdout).toContain('Fix:       The cycle (`relais cycle`) stopped');
  });
});
