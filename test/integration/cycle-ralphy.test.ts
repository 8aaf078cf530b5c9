import { afterEach, describe, expect, it } from 'vitest';
import { scripted, verdict, writes } from '../support/cycle-project.js';
import type { TestProject } from '../support/project.js';
import { happyScenario, runInProcess, scriptedGates, workflowProject, YES } from '../support/workflow.js';

// ralphy start's cycle engine (workflow/implement-cycle.ts) as the cycle sees its TASKS.md tasks:
// a diff budget from the config, and a tests check that really runs a test.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

const lines = (n: number, name: string) =>
  Array.from({ length: n }, (_, i) => `export const ${name}${i} = ${i};`).join('\n') + '\n';

describe('ralphy start with the cycle engine: TASKS.md tasks', () => {
  it('a 350-line task is within its diff budget (diff_limits.default_max_lines_changed), and its tests run', async () => {
    project = workflowProject((config) => {
      config.workflow.implementation_engine = 'cycle';
      // cycle.verify.tests left empty: the config's parameter-free templates are the tests.
      config.cycle = { mode: 'yolo' };
    });
    const scenario = happyScenario();
    scenario.orchestrator = [];
    scenario.builder = [];
    project.scenario(scenario);
    const { runners } = scripted({
      implementer: [writes({ 'src/a.ts': lines(350, 'a') }), writes({ 'src/b.ts': lines(10, 'b') })],
      verifier: verdict('YES'),
    });
    const run = await runInProcess(project, {
      gates: scriptedGates({ spec: YES, qa: YES }),
      cycleRunners: () => runners,
    });
    const verdicts = run.events.filter((e) => e.type === 'cycle.verdict');
    expect(verdicts.map((v) => (v.type === 'cycle.verdict' ? v.failures : []))).toEqual([[], []]);
    expect(run.outcome, JSON.stringify(run.outcome)).toMatchObject({ status: 'completed' });
    expect(
      run.events.filter((e) => e.type === 'verify.started' && e.template_id === 'ok').length,
    ).toBeGreaterThanOrEqual(2);
  });
});
