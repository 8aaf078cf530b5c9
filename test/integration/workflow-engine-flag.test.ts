import { afterEach, describe, expect, it } from 'vitest';
import type { TestProject } from '../support/project.js';
import { specStep, workflowFile, workflowProject } from '../support/workflow.js';

// `ralphy start --engine ticks|single|cycle` through the built CLI: the flag picks the engine of a
// new workflow over workflow.implementation_engine, WORKFLOW.json records it, and a resume keeps
// it (another --engine is refused, not silently ignored).

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

describe('ralphy start --engine', () => {
  it('records the engine of the run; a resume with another engine is a clear error that changes nothing', () => {
    const p = workflowProject((config) => {
      config.workflow.implementation_engine = 'ticks';
    });
    project = p;
    p.scenario({ spec: [specStep()] });
    const env = { IS_SANDBOX: '1' };

    const bogus = p.cliSync(['start', '--engine', 'parallel'], env);
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain('--engine must be one of ticks, single, cycle (got "parallel")');
    expect(p.exists('relais/WORKFLOW.json')).toBe(false);

    // No terminal and no --yes: the spec gate waits, with the engine of this run recorded.
    const first = p.cliSync(['start', '--engine', 'single'], env);
    expect(first.code, first.stdout + first.stderr).toBe(1);
    expect(workflowFile(p)).toMatchObject({ state: 'AWAITING_SPEC_VALIDATION', engine: 'single' });
    const before = p.read('relais/WORKFLOW.json');

    const other = p.cliSync(['start', '--engine', 'cycle', '--yes'], env);
    expect(other.code).toBe(3);
    expect(other.stdout).toContain(
      '--engine cycle cannot resume this workflow: "Greeting service" started with the single engine (recorded in relais/WORKFLOW.json)',
    );
    expect(other.stdout).toContain('Resume it with ralphy start --engine single (or without --engine)');
    expect(p.read('relais/WORKFLOW.json')).toBe(before);
    // Only the first start's spec-agent ran.
    expect(p.calls().map((c) => c.role)).toEqual(['spec']);
  }, 180_000); // whole workflows through the CLI: slow on a loaded machine, not a wait

  it('--parallel above 1 with commit_on_success off is refused before anything runs (a lane lands only commits)', () => {
    const p = workflowProject((config) => {
      config.runner.commit_on_success = false;
    });
    project = p;
    p.scenario({ spec: [specStep()] });
    const refused = p.cliSync(['start', '--parallel', '2', '--yes'], { IS_SANDBOX: '1' });
    expect(refused.code).toBe(3);
    expect(refused.stdout).toContain('--parallel 2 needs runner.commit_on_success');
    expect(refused.stdout).toContain('or run with --parallel 1');
    expect(p.exists('relais/WORKFLOW.json')).toBe(false);
    expect(p.calls()).toEqual([]);
  }, 60_000); // one CLI start: slow on a loaded machine, not a wait

  // Issue 19: lanes are the ticks engine's; another engine is refused, never silently one at a time.
  it('--parallel or --attempts above 1 with the single or cycle engine is refused before anything runs', () => {
    const p = workflowProject();
    project = p;
    p.scenario({ spec: [specStep()] });
    const env = { IS_SANDBOX: '1' };
    const single = p.cliSync(['start', '--engine', 'single', '--parallel', '2', '--yes'], env);
    expect(single.code).toBe(3);
    expect(single.stdout).toContain(
      '--parallel 2 runs tasks in parallel lanes, which only the ticks engine has; this workflow uses the single engine (one dev-agent run implements every task in the main tree)',
    );
    expect(single.stdout).toContain('Run a new workflow with --engine ticks, or drop --parallel 2.');
    const cycle = p.cliSync(['start', '--engine', 'cycle', '--attempts', '3', '--yes'], env);
    expect(cycle.code).toBe(3);
    expect(cycle.stdout).toContain(
      '--attempts 3 runs tasks in parallel lanes, which only the ticks engine has',
    );
    expect(cycle.stdout).toContain('this workflow uses the cycle engine');
    // From the config alone, the fix names the config.
    p.commitConfig((config) => {
      config.workflow.parallel = 3;
      config.workflow.implementation_engine = 'single';
    });
    const configured = p.cliSync(['start', '--yes'], env);
    expect(configured.code).toBe(3);
    expect(configured.stdout).toContain('workflow.parallel 3 runs tasks in parallel lanes');
    expect(configured.stdout).toContain('or drop workflow.parallel 3 from relais.config.json.');
    expect(p.exists('relais/WORKFLOW.json')).toBe(false);
    expect(p.calls()).toEqual([]);
  }, 90_000); // three CLI starts: slow on a loaded machine, not a wait
});
