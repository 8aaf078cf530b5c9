import { afterEach, describe, expect, it } from 'vitest';
import type { TestProject } from '../support/project.js';
import { happyScenario, specStep, workflowFile, workflowProject } from '../support/workflow.js';

// Per-phase caps (config workflow.phases.<phase>.max_cost_usd / max_calls) through the built CLI:
// the runner counts every agent call of a phase where it counts the workflow's spend, stops the
// phase before a call past its cap (FAILED, phase_budget_exhausted), and shows the spend per phase
// in the plain output and `ralphy status`; raising the cap lets `ralphy start` resume.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

const env = { IS_SANDBOX: '1' };

describe('per-phase budgets', () => {
  it('a phase at its call cap stops before the next call; the verified work is kept; status shows it; a raised cap resumes', () => {
    const p = workflowProject((config) => {
      config.workflow.phases = { implementation: { max_calls: 2 }, specification: { max_cost_usd: 5 } };
    });
    project = p;
    const scenario = happyScenario();
    scenario.spec = [specStep({ cost: 0.25 })];
    p.scenario(scenario);

    const first = p.cliSync(['start', '--yes'], env);
    expect(first.code, first.stdout + first.stderr).toBe(1);
    expect(first.stdout).toContain('Spend: SPECIFICATION $0.2500, 1 agent call, cap $5.00');
    // One tick is two calls (orchestrator, builder): task 1 is verified, task 2 never starts.
    expect(first.stdout).toContain('Spend: IMPLEMENTATION');
    expect(first.stdout).toContain('2 of 2 agent calls');
    expect(first.stdout).toContain(
      'State: FAILED (reason: phase_budget_exhausted) IMPLEMENTATION made 2 agent call(s), at or above workflow.phases.implementation.max_calls 2',
    );
    const w = workflowFile(p);
    expect(w).toMatchObject({ state: 'FAILED', failure_reason: 'phase_budget_exhausted' });
    expect(w.phases.IMPLEMENTATION).toMatchObject({ calls: 2, max_calls: 2, max_cost_usd: null });
    expect(w.phases.SPECIFICATION).toMatchObject({ calls: 1, cost_usd: 0.25, max_cost_usd: 5 });
    // One ledger: the phases' spend adds up to the workflow's.
    const sum = Object.values(w.phases).reduce((n: number, s: any) => n + s.cost_usd, 0);
    expect(sum).toBeCloseTo(w.cost_usd, 6);
    expect(w.tasks.map((t: any) => t.verdict)).toEqual(['verified', null]);
    expect(p.calls().filter((c) => c.role === 'builder')).toHaveLength(1);

    const status = p.cliSync(['status'], env);
    expect(status.stdout).toMatch(/Spend: {5}SPECIFICATION \$0\.2500, 1 agent call, cap \$5\.00/);
    expect(status.stdout).toMatch(/Spend: {5}IMPLEMENTATION \$[0-9.]+, 2 of 2 agent calls/);
    expect(status.stdout).toContain('Reason:    phase_budget_exhausted');
    expect(status.stdout).toContain('Fix:       A phase reached its own cap');

    // The remediation: raise the cap; the resume keeps the spend so far and goes on from task 2.
    p.commitConfig((config) => {
      config.workflow.phases.implementation.max_calls = 10;
    });
    const resumed = p.cliSync(['start', '--yes'], env);
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    const after = workflowFile(p);
    expect(after.state).toBe('COMPLETED');
    expect(after.phases.IMPLEMENTATION).toMatchObject({ calls: 4, max_calls: 10 });
    expect(after.tasks.map((t: any) => t.verdict)).toEqual(['verified', 'verified']);
    expect(p.calls().filter((c) => c.role === 'builder')).toHaveLength(2);
  }, 180_000); // whole workflows through the CLI: slow on a loaded machine, not a wait
  // Issue 18: the caps are checked before every agent call, not once per tick. A tick is two calls
  // here: with room for one more call only, the next tick's orchestrator runs and its builder is
  // refused before it starts, so the phase never goes past its cap.
  it('a cap reached in the middle of a tick stops it before the next call: never past the cap', () => {
    const p = workflowProject((config) => {
      config.workflow.phases = { implementation: { max_calls: 3 } };
    });
    project = p;
    p.scenario(happyScenario());
    const run = p.cliSync(['start', '--yes'], env);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    const w = workflowFile(p);
    expect(w).toMatchObject({ state: 'FAILED', failure_reason: 'phase_budget_exhausted' });
    expect(w.failure_detail).toBe(
      'IMPLEMENTATION made 3 agent call(s), at or above workflow.phases.implementation.max_calls 3',
    );
    expect(w.phases.IMPLEMENTATION).toMatchObject({ calls: 3, max_calls: 3 });
    const roles = p.calls().map((c) => c.role);
    expect(roles.filter((r) => r === 'orchestrator')).toHaveLength(2);
    expect(roles.filter((r) => r === 'builder')).toHaveLength(1);
    expect(w.tasks.map((t: any) => t.verdict)).toEqual(['verified', null]);
    // The refused builder changed nothing: the tree is the first task's commit.
    expect(p.read('src/b.ts')).toBe('export const b = 1;\n');
    expect(p.status()).toBe('');
  }, 180_000);
});
