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
});
