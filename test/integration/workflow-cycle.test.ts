import { afterEach, describe, expect, it } from 'vitest';
import { scripted, verdict, writes } from '../support/cycle-project.js';
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
