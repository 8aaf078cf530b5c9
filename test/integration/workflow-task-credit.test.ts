import { afterEach, describe, expect, it } from 'vitest';
import { plainReporter } from '../../source/cli/front-end/plain-reporter.js';
import type { StampedEvent } from '../../source/engine/events.js';
import { renderPrBody } from '../../source/engine/workflow/pr-body.js';
import { BUILDER_OK, type TestProject, task } from '../support/project.js';
import {
  ghCalls,
  happyScenario,
  runInProcess,
  scriptedGates,
  workflowFile,
  workflowProject,
  YES,
} from '../support/workflow.js';

// The newcomer's defects 1 and 2: the `ticks` engine credits a TASKS.md task only with a judged,
// verified change of its own that touches the task's files, made with no write the runner refused
// (docs/workflow.md, "When a task is done"). A green step that changed nothing, whose writes the
// runner refused, or that did another task's work is recorded as not accepted and never reaches a
// ✓, a count, a status line or the PR body. Each test failed before the rule existed.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

const scoped = (id: string, globs: string[], intent = `Implement ${globs.join(', ')}`) =>
  task({
    task_id: id,
    intent,
    scope: {
      allowed_globs: globs,
      forbidden_globs: [],
      allow_new_files: false,
      allow_lockfile_changes: false,
    },
  });

/** The plain lines of a run, as `ralphy start` prints them in a pipe. */
function plainLines(events: readonly StampedEvent[]): string[] {
  let out = '';
  const plain = plainReporter({
    cwd: '/',
    env: {},
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: () => true },
  });
  for (const event of events) plain(event);
  return out.split('\n');
}

/** What `ralphy status`, the PR body and every plain line say about the tasks, checked at once. */
function expectNothingVerified(p: TestProject & { ghLog: string }, events: readonly StampedEvent[]): void {
  const workflow = workflowFile(p);
  expect(workflow.tasks.map((t: any) => t.verdict)).not.toContain('verified');
  expect(workflow.tasks.map((t: any) => t.status)).not.toContain('completed');
  expect(workflow.tasks_completed).toBe(0);
  expect(events.some((e) => e.type === 'task.updated' && e.verdict === 'verified')).toBe(false);
  const lines = plainLines(events).filter((l) => l.includes('] Task '));
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) expect(line).not.toMatch(/\(verified:|: completed/);
  // No "ralphy: task N completed" commit: TASKS.md was never flipped.
  expect(p.git('log', '--format=%s', 'main..HEAD')).not.toMatch(/ralphy: task \d+ completed/);
  expect(p.read('specs/TASKS.md')).not.toContain('completed');
  const status = p.cliSync(['status']);
  expect(status.stdout).toContain('Tasks:     0/2');
  const body = renderPrBody({
    workflow,
    objective: '',
    blast: { files_touched: 0, lines_added: 0, lines_deleted: 0, new_files: 0 },
    files: [],
    qaSummary: [],
  });
  expect(body).toContain('## Tasks (0/2 verified by the runner)');
  expect(body).not.toContain('- [x]');
  expect(ghCalls(p)).toEqual([]);
}

describe('a TASKS.md task is done only with a verified change of its own', () => {
  it('a SUCCESS step that changed nothing is "not accepted: no change"; the task goes on, then fails honestly', async () => {
    project = workflowProject((config) => {
      config.workflow.max_ticks_per_task = 2;
    });
    const scenario = happyScenario();
    // The builder claims the work and changes nothing; the tests were already green.
    scenario.orchestrator = [
      { result_json: scoped('T1', ['src/a.ts']) },
      { result_json: scoped('T1b', ['src/a.ts'], 'Implement greet in src/a.ts, for real') },
    ];
    scenario.builder = [
      { result_json: { ...BUILDER_OK, summary: 'Added greet; all tests pass' } },
      { result_json: { ...BUILDER_OK, summary: 'Done again' } },
    ];
    project.scenario(scenario);
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'tick_stopped' });
    expect(run.outcome.detail).toContain('task 1');
    expect(run.outcome.detail).toContain('no change');
    const first = workflowFile(project).tasks[0];
    expect(first).toMatchObject({ verdict: 'rejected', ticks: 2, claimed: 'Done again' });
    expect(first.verified).toMatch(/^no change/);
    // The orchestrator was told, and re-planned.
    const orchestrator = project.calls().filter((c) => c.role === 'orchestrator');
    expect(orchestrator[1]?.prompt).toContain('changed nothing');
    expect(plainLines(run.events).join('\n')).toContain('(not accepted: no change');
    expectNothingVerified(project, run.events);
  }, 180_000);

  it('a step whose writes the runner refused is "not accepted", even when what it did write passed', async () => {
    project = workflowProject((config) => {
      config.workflow.max_ticks_per_task = 1;
    });
    const scenario = happyScenario();
    scenario.orchestrator = [{ result_json: scoped('T1', ['src/a.ts']) }];
    scenario.builder = [
      {
        actions: [
          // Refused by the scope hook before it happens (src/b.ts is outside the step's scope)...
          { tool_write: 'src/b.ts', content: 'export const bye = 1;\n' },
          // ...and the part that was allowed.
          { write: 'src/a.ts', content: 'export const greet = (n: string) => "Hello, " + n;\n' },
        ],
        result_json: { ...BUILDER_OK, summary: 'All done', files_intended: ['src/a.ts', 'src/b.ts'] },
      },
    ];
    project.scenario(scenario);
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'tick_stopped' });
    const first = workflowFile(project).tasks[0];
    expect(first.verdict).toBe('rejected');
    expect(first.verified).toMatch(/the runner refused 1 write.*src\/b\.ts/);
    // Judged and verified, the allowed part stays on the branch; it completes nothing.
    expect(project.read('src/a.ts')).toContain('Hello, ');
    expect(run.outcome.detail).toContain('refused');
    expectNothingVerified(project, run.events);
  }, 180_000);

  it("a verified commit that did another task's work does not complete the current task", async () => {
    project = workflowProject((config) => {
      config.workflow.max_ticks_per_task = 1;
    });
    const scenario = happyScenario();
    // Task 1 is src/a.ts (TASKS.md); the step writes src/b.ts, task 2's file, inside its own scope.
    scenario.orchestrator = [{ result_json: scoped('T2-real', ['src/**']) }];
    scenario.builder = [
      {
        actions: [{ write: 'src/b.ts', content: 'export const bye = (n: string) => "Bye, " + n;\n' }],
        result_json: { ...BUILDER_OK, summary: 'bye added', files_intended: ['src/b.ts'] },
      },
    ];
    project.scenario(scenario);
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'tick_stopped' });
    const first = workflowFile(project).tasks[0];
    expect(first.verdict).toBe('rejected');
    expect(first.verified).toContain("did other work: src/b.ts, not task 1's src/a.ts");
    expectNothingVerified(project, run.events);
  }, 180_000);

  it('"already done" from the orchestrator completes nothing: the runner saw no change of the task', async () => {
    project = workflowProject((config) => {
      config.workflow.max_ticks_per_task = 1;
    });
    const scenario = happyScenario();
    const { builder: _none, ...rest } = task({ task_id: 'DONE' });
    scenario.orchestrator = [
      { result_json: { ...rest, control: { action: 'stop', reason: 'already done' } } },
    ];
    scenario.builder = [];
    project.scenario(scenario);
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'tick_stopped' });
    const first = workflowFile(project).tasks[0];
    expect(first.verdict).toBe('rejected');
    expect(first.verified).toMatch(/^no change/);
    expectNothingVerified(project, run.events);
  }, 180_000);
});

describe('"already done" backed by the branch', () => {
  const stop = () => {
    const { builder: _none, ...rest } = task({ task_id: 'DONE' });
    return { result_json: { ...rest, control: { action: 'stop', reason: 'bye is on the branch already' } } };
  };
  const GREET = { write: 'src/a.ts', content: 'export const greet = (n: string) => "Hello, " + n;\n' };
  const BYE = { write: 'src/b.ts', content: 'export const bye = (n: string) => "Bye, " + n;\n' };

  it('completes the task when a commit no task was credited with changed its paths, and the checks pass', async () => {
    project = workflowProject();
    const scenario = happyScenario();
    // Task 1's first step writes only task 2's file: "did other work", its commit kept and
    // credited to nobody. Its second step does task 1. Task 2's orchestrator then says "done".
    scenario.orchestrator = [
      { result_json: scoped('T1', ['src/a.ts', 'src/b.ts']) },
      { result_json: scoped('T1b', ['src/a.ts']) },
      stop(),
    ];
    scenario.builder = [
      { actions: [BYE], result_json: { ...BUILDER_OK, files_intended: ['src/b.ts'] } },
      { actions: [GREET], result_json: BUILDER_OK },
    ];
    project.scenario(scenario);
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome.state).toBe('COMPLETED');
    const [first, second] = workflowFile(project).tasks;
    expect(first.verdict).toBe('verified');
    expect(second.verdict).toBe('verified');
    expect(second.verified).toContain(
      'already on the branch: src/b.ts changed by a commit no task was credited with',
    );
    // No step was paid for task 2: the claim was checked against git and the checks.
    expect(project.calls().filter((c) => c.role === 'builder')).toHaveLength(2);
  }, 180_000);

  it('a commit credited to another task proves nothing: the claim completes nothing', async () => {
    project = workflowProject((config) => {
      config.workflow.max_ticks_per_task = 1;
    });
    const scenario = happyScenario();
    // Task 1's one step also writes task 2's file, and is credited to task 1.
    scenario.orchestrator = [{ result_json: scoped('T1', ['src/a.ts', 'src/b.ts']) }, stop()];
    scenario.builder = [
      { actions: [GREET, BYE], result_json: { ...BUILDER_OK, files_intended: ['src/a.ts', 'src/b.ts'] } },
    ];
    project.scenario(scenario);
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'tick_stopped' });
    const [first, second] = workflowFile(project).tasks;
    expect(first.verdict).toBe('verified');
    expect(second.verdict).toBe('rejected');
    expect(second.verified).toMatch(/^no change \(the orchestrator said it was already done/);
  }, 180_000);
});

describe('a task whose files the fence excludes', () => {
  it('stops before any step for it, saying which file to add to the fence (defect 3)', async () => {
    // The fence `relais init` derives leaves manifests out; here task 2's file is left out.
    project = workflowProject((config) => {
      config.scope.default_allowed_globs = ['src/a.ts'];
    });
    project.scenario(happyScenario());
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'scope_outside_config' });
    expect(run.outcome.detail).toContain(
      'task 2 "Say goodbye" names src/b.ts, outside scope.default_allowed_globs',
    );
    expect(run.outcome.detail).toContain('Widen the fence to src/b.ts');
    // Task 1 was done and verified; no step was paid for task 2.
    expect(workflowFile(project).tasks.map((t: any) => t.verdict)).toEqual(['verified', null]);
    expect(project.calls().filter((c) => c.role === 'orchestrator')).toHaveLength(1);
  }, 180_000);
});
