import { afterEach, describe, expect, it } from 'vitest';
import type { TestProject } from '../support/project.js';
import {
  happyScenario,
  runInProcess,
  scriptedGates,
  TASKS_MD,
  workflowFile,
  workflowProject,
  YES,
} from '../support/workflow.js';

// The `single` implementation engine (seed 002 §3.2): one dev-agent run over every task, ending
// on EXIT_SIGNAL; the runner believes it only when TASKS.md shows every task completed and the
// project's checks pass, and the judge holds the change to the configured scope.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

const HAS_BYE = {
  id: 'has-bye',
  cmd: 'node',
  args: ['-e', 'process.exit(require("fs").readFileSync("src/b.ts", "utf8").includes("bye") ? 0 : 1)'],
};

const tasksWith = (one: string, two: string) =>
  TASKS_MD.replace('- **Status**: pending', `- **Status**: ${one}`).replace(
    '- **Status**: pending',
    `- **Status**: ${two}`,
  );

const GREET = { write: 'src/a.ts', content: 'export const greet = (n: string) => "Hello, " + n;\n' };
const BYE = { write: 'src/b.ts', content: 'export const bye = (n: string) => "Bye, " + n;\n' };
const DONE = 'Both tasks are implemented and tested.\nEXIT_SIGNAL: true';

function singleProject(): TestProject & { ghLog: string; remote: string } {
  return workflowProject((config) => {
    config.workflow.implementation_engine = 'single';
    config.verification.templates.push(HAS_BYE);
  });
}

const devCalls = () => (project?.calls() ?? []).filter((c) => c.role === 'dev');

describe('single engine', () => {
  it('a premature "done" is sent back twice (task left, failing check), then one judged commit', async () => {
    project = singleProject();
    const scenario = happyScenario();
    scenario.orchestrator = [];
    scenario.builder = [];
    scenario.dev = [
      {
        actions: [GREET, { write: 'specs/TASKS.md', content: tasksWith('completed', 'pending') }],
        result: DONE,
      },
      { actions: [{ write: 'specs/TASKS.md', content: tasksWith('completed', 'completed') }], result: DONE },
      { actions: [BYE], result: DONE },
    ];
    project.scenario(scenario);
    const base = project.head();
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome, JSON.stringify(run.outcome)).toMatchObject({
      status: 'completed',
      state: 'COMPLETED',
    });
    const [, second, third] = devCalls();
    expect(second?.prompt).toContain('specs/TASKS.md still shows 1 task(s) not completed: 2. Say goodbye');
    expect(third?.prompt).toContain('verification "has-bye" exited 1');
    expect(project.calls().map((c) => c.role)).not.toContain('orchestrator');
    const log = project.git('log', '--format=%s', `${base}..HEAD`).trim().split('\n').reverse();
    expect(log).toEqual([
      'ralphy: specification and tasks for "Greeting service"',
      'ralphy: implementation of "Greeting service" (dev-agent)',
      'ralphy: QA report for "Greeting service"',
    ]);
    const workflow = workflowFile(project);
    expect(workflow.engine).toBe('single');
    expect(workflow.tasks.map((t: any) => t.status)).toEqual(['completed', 'completed']);
    expect(workflow.tasks[1].claimed).toBe('the dev-agent marked it completed');
    expect(workflow.tasks[1].verified).toMatch(/^checks on [0-9a-f]{12}: ok ✓ \d+\.\ds, has-bye ✓/);
  });

  it('a change outside the configured scope rolls the whole run back: FAILED (scope_violation)', async () => {
    project = singleProject();
    const scenario = happyScenario();
    scenario.dev = [
      {
        actions: [
          GREET,
          BYE,
          { write: '.github/workflows/deploy.yml', content: 'on: push\n' },
          { write: 'specs/TASKS.md', content: tasksWith('completed', 'completed') },
        ],
        result: DONE,
      },
    ];
    project.scenario(scenario);
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'scope_violation' });
    expect(run.outcome.detail).toContain('STOP_SCOPE_VIOLATION_OUTSIDE_ALLOWED');
    expect(run.outcome.detail).toContain('.github/workflows/deploy.yml');
    expect(project.exists('.github/workflows/deploy.yml')).toBe(false);
    expect(project.read('src/a.ts')).toBe('export const a = 1;\n');
    expect(project.status()).toBe('');
    // The claim was rolled back with the change: no record counts it as done.
    const workflow = workflowFile(project);
    expect(workflow.tasks.map((t: any) => t.status)).not.toContain('completed');
    expect(workflow.tasks_completed).toBe(0);
  });

  // Issue 15: the dev-agent marks every task completed and says EXIT_SIGNAL, but the runner's
  // checks fail on every try. The claim is disproved: WORKFLOW.json (and so `ralphy status`'s
  // Tasks count and any PR body) never counts those tasks as completed.
  it('a claim the runner disproved is never recorded as done', async () => {
    project = workflowProject((config) => {
      config.workflow.implementation_engine = 'single';
      config.workflow.agent_retries = 1;
      config.verification.templates.push(HAS_BYE);
    });
    const scenario = happyScenario();
    const claim = {
      actions: [GREET, { write: 'specs/TASKS.md', content: tasksWith('completed', 'completed') }],
      result: DONE,
    };
    scenario.dev = [claim, claim];
    project.scenario(scenario);
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome).toMatchObject({ state: 'FAILED' });
    expect(devCalls()).toHaveLength(2);
    const workflow = workflowFile(project);
    expect(workflow.tasks.map((t: any) => t.status)).toEqual(['in_progress', 'in_progress']);
    expect(workflow.tasks_completed).toBe(0);
    expect(workflow.tasks.every((t: any) => t.verified === null)).toBe(true);
    expect(workflow.tasks[1].claimed).toBe('the dev-agent marked it completed');
    const updates = run.events.filter((e: any) => e.type === 'task.updated');
    expect(updates.some((e: any) => e.status === 'completed')).toBe(false);
  });
});
