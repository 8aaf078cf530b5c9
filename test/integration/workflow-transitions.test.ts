import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { requestAbort } from '../../source/engine/workflow/abort-request.js';
import { allTransitions } from '../../source/engine/workflow/transitions.js';
import { workspacePaths } from '../../source/engine/workspace/paths.js';
import { FakeClock } from '../support/fake-clock.js';
import { survivorsOf } from '../support/host-pid.js';
import { answer, ask, plannerProject, proceedGate, ready } from '../support/planner.js';
import type { TestProject } from '../support/project.js';
import {
  ghCalls,
  happyScenario,
  NO,
  qaStep,
  runInProcess,
  scriptedGates,
  workflowFile,
  workflowProject,
  YES,
} from '../support/workflow.js';

// Seed 002 §8, edge by edge: every transition of the diagram is taken by a real workflow run
// (agents are real child processes of the scripted fake-claude). The table below is checked
// against the engine's own transition table, so an edge cannot be added without a test here.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

const COVERED = new Set<string>();
function covers(...edges: string[]): void {
  for (const e of edges) COVERED.add(e);
}

describe('seed 002 §8 transitions', () => {
  it('reject at the first gate: AWAITING_SPEC_VALIDATION → REJECTED, nothing is built', async () => {
    project = workflowProject();
    project.scenario(happyScenario());
    const run = await runInProcess(project, { gates: scriptedGates({ spec: NO }) });
    expect(run.states).toEqual(['SPECIFICATION', 'AWAITING_SPEC_VALIDATION', 'REJECTED']);
    expect(run.outcome.status).toBe('rejected');
    expect(project.calls().map((c) => c.role)).toEqual(['spec']);
    expect(workflowFile(project)).toMatchObject({
      state: 'REJECTED',
      status: 'rejected',
      failure_reason: null,
    });
    // `ralphy status` calls the end what it is: rejected, not paused, and says it once.
    const status = project.cliSync(['status']);
    expect(status.stdout).toContain('Workflow:  "Greeting service" REJECTED');
    expect(status.stdout).not.toContain('(rejected)');
    expect(status.stdout).not.toContain('Paused:');
    expect(status.stdout).toMatch(/^Rejected: {2}\S/m);
    // workflowProject turns planning off: the PLANNING edges are taken in planner-workflow.test.ts.
    covers('IDLE-skip_planning', 'SPECIFICATION-spec_done', 'AWAITING_SPEC_VALIDATION-reject');
  });

  it('nobody can answer (no terminal, no --yes): the gate is denied and waits, no transition; a later start answers it', async () => {
    project = workflowProject();
    project.scenario(happyScenario());
    const run = await runInProcess(project, { gates: scriptedGates({}) });
    expect(run.outcome).toMatchObject({ status: 'needs_input', state: 'AWAITING_SPEC_VALIDATION' });
    expect(run.states).toEqual(['SPECIFICATION', 'AWAITING_SPEC_VALIDATION', 'AWAITING_SPEC_VALIDATION']);
    // Nobody decided anything: recorded as unanswered, never as a reject.
    expect(workflowFile(project)).toMatchObject({
      state: 'AWAITING_SPEC_VALIDATION',
      status: 'interrupted',
      failure_reason: null,
      gate_decisions: [{ gate: 'spec', decision: 'unanswered', by: 'nobody' }],
    });
    const later = await runInProcess(project, { gates: scriptedGates({ resume: YES, spec: YES, qa: YES }) });
    expect(later.outcome.state).toBe('COMPLETED');
    expect(project.calls().filter((c) => c.role === 'spec')).toHaveLength(1);
    // The PR body lists the decisions humans took, not the gate that waited for one.
    const gates = project.read('relais/PR_BODY.md').split('## Human gates\n')[1]?.split('\n\n')[0];
    expect(gates?.split('\n').map((l) => l.replace(/, [^,]*\)$/, ')'))).toEqual([
      '- resume: approve (human)',
      '- spec: approve (human)',
      '- qa: approve (human)',
    ]);
  });

  it('reject at the second gate: AWAITING_QA_VALIDATION → FAILED (rejected_at_qa), no pull request', async () => {
    project = workflowProject();
    project.scenario(happyScenario());
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: NO }) });
    expect(run.states).toEqual([
      'SPECIFICATION',
      'AWAITING_SPEC_VALIDATION',
      'IMPLEMENTATION',
      'QA',
      'AWAITING_QA_VALIDATION',
      'FAILED',
    ]);
    expect(run.outcome).toMatchObject({ status: 'failed', reason: 'rejected_at_qa' });
    expect(ghCalls(project)).toEqual([]);
    covers(
      'AWAITING_SPEC_VALIDATION-approve',
      'IMPLEMENTATION-exit_signal',
      'QA-exit_signal',
      'AWAITING_QA_VALIDATION-reject',
    );
  });

  it('SPECIFICATION → FAILED on the circuit breaker: a hung spec-agent is killed after max_attempts', async () => {
    project = workflowProject((config) => {
      config.circuit_breaker = { ...config.circuit_breaker, inactivity_timeout: 1, max_attempts: 2 };
    });
    project.scenario({ spec: [{ hang: true }] });
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES }) });
    expect(run.states).toEqual(['SPECIFICATION', 'FAILED']);
    expect(run.outcome).toMatchObject({ status: 'failed', reason: 'circuit_breaker_triggered' });
    const log = run.events.flatMap((e) => (e.type === 'breaker.changed' ? e.log : []));
    expect(log).toEqual([
      expect.stringMatching(
        /^⚠ Circuit breaker: inactivity detected \(\ds without output; threshold 1s, inactivity_timeout\)$/,
      ),
      '⚠ Circuit breaker: attempt 1/2, closer watch',
      expect.stringMatching(
        /^⚠ Circuit breaker: inactivity detected \(\ds without output; threshold 1s, inactivity_timeout\)$/,
      ),
      '✗ Circuit breaker: OPEN - agent stopped after 2 attempts',
    ]);
    // The real hung child process is gone, and nothing it might have left stays in the tree.
    expect(existsSync(`${project.scenarioPath}.spec.pid`)).toBe(true);
    expect(survivorsOf(project.scenarioPath)).toEqual([]);
    expect(project.status()).toBe('');
    expect(workflowFile(project).circuit_breaker).toMatchObject({
      state: 'open',
      attempts: 2,
      max_attempts: 2,
    });
    covers('SPECIFICATION-fail');
  });

  it('SPECIFICATION → FAILED on the phase timeout', async () => {
    project = workflowProject((config) => {
      config.circuit_breaker.enabled = false;
      config.workflow.timeouts.specification = 1;
    });
    project.scenario({ spec: [{ hang: true }] });
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES }) });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'phase_timeout' });
    expect(run.outcome.detail).toContain('workflow.timeouts.specification: 1s');
  });

  it('IMPLEMENTATION → FAILED on the phase timeout (fake clock): the hung builder is killed, the tick rolled back', async () => {
    project = workflowProject((config) => {
      config.circuit_breaker.enabled = false;
      config.workflow.timeouts.implementation = 600;
    });
    const scenario = happyScenario();
    scenario.builder = [
      { actions: [{ write: 'src/a.ts', content: 'half done\n' }], say: 'Working on it.', hang: true },
    ];
    project.scenario(scenario);
    const clock = new FakeClock();
    const run = await runInProcess(project, {
      clock,
      gates: scriptedGates({ spec: YES }),
      onEvent: (event) => {
        // The builder is running (it spoke): ten minutes pass on the phase's clock.
        if (event.type === 'agent.output' && event.role === 'builder') clock.advance(600_000);
      },
    });
    expect(run.states).toEqual(['SPECIFICATION', 'AWAITING_SPEC_VALIDATION', 'IMPLEMENTATION', 'FAILED']);
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'phase_timeout' });
    expect(run.outcome.detail).toContain('the IMPLEMENTATION phase ran past its timeout');
    expect(run.outcome.detail).toContain('workflow.timeouts.implementation: 600s');
    expect(existsSync(`${project.scenarioPath}.builder.pid`)).toBe(true);
    expect(survivorsOf(project.scenarioPath)).toEqual([]);
    expect(project.read('src/a.ts')).toBe('export const a = 1;\n');
    expect(project.status()).toBe('');
  });

  it('IMPLEMENTATION → FAILED on the circuit breaker: the same error three times kills the builder and the tick rolls back', async () => {
    project = workflowProject((config) => {
      config.circuit_breaker.max_attempts = 1;
    });
    const scenario = happyScenario();
    scenario.builder = [
      {
        actions: [{ write: 'src/a.ts', content: 'broken\n' }],
        say: "Error: Cannot find module 'foo' at a.ts:1:1\nError: Cannot find module 'foo' at a.ts:2:1\nError: Cannot find module 'foo' at a.ts:3:1",
        hang: true,
      },
    ];
    project.scenario(scenario);
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES }) });
    expect(run.states).toEqual(['SPECIFICATION', 'AWAITING_SPEC_VALIDATION', 'IMPLEMENTATION', 'FAILED']);
    expect(run.outcome.reason).toBe('circuit_breaker_triggered');
    expect(run.outcome.detail).toContain('same error seen 3 times within 10 lines (threshold 3)');
    expect(run.outcome.detail).toContain("Error: Cannot find module 'foo'");
    expect(project.read('src/a.ts')).toBe('export const a = 1;\n');
    expect(project.status()).toBe('');
    covers('IMPLEMENTATION-fail');
  });

  it('IMPLEMENTATION → FAILED on ralphy abort (reason aborted), the builder killed and rolled back', async () => {
    project = workflowProject();
    const scenario = happyScenario();
    scenario.builder = [
      { actions: [{ write: 'src/a.ts', content: 'half done\n' }], say: 'Working on it.', hang: true },
    ];
    project.scenario(scenario);
    const paths = workspacePaths(project.root, 'relais');
    const run = await runInProcess(project, {
      gates: scriptedGates({ spec: YES }),
      onEvent: (event) => {
        // `ralphy abort`'s own function: the lock names this process, so it signals itself.
        if (event.type === 'agent.output' && event.role === 'builder') void requestAbort(paths, new Date());
      },
    });
    expect(run.outcome).toMatchObject({ status: 'failed', state: 'FAILED', reason: 'aborted' });
    expect(existsSync(`${project.scenarioPath}.builder.pid`)).toBe(true);
    expect(survivorsOf(project.scenarioPath)).toEqual([]);
    expect(project.read('src/a.ts')).toBe('export const a = 1;\n');
    expect(project.status()).toBe('');
    covers('IMPLEMENTATION-abort');
  });

  it('QA → FAILED on the circuit breaker (output size cap)', async () => {
    project = workflowProject((config) => {
      config.circuit_breaker = { ...config.circuit_breaker, max_output_size: 1024, max_attempts: 1 };
    });
    const scenario = happyScenario();
    scenario.qa = [
      qaStep({ say: Array.from({ length: 40 }, (_, i) => `finding ${i}: ${'x'.repeat(60)}`).join('\n') }),
    ];
    project.scenario(scenario);
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES }) });
    expect(run.states.slice(-2)).toEqual(['QA', 'FAILED']);
    expect(run.outcome.reason).toBe('circuit_breaker_triggered');
    expect(run.outcome.detail).toContain('threshold 1024 bytes, max_output_size');
    expect(project.exists('specs/QA_REPORT.md')).toBe(false);
    covers('QA-fail');
  });

  it('QA → FAILED on the phase timeout (fake clock): the hung qa-agent is killed, no report is kept', async () => {
    project = workflowProject((config) => {
      config.circuit_breaker.enabled = false;
      config.workflow.timeouts.qa = 1800;
    });
    const scenario = happyScenario();
    scenario.qa = [
      {
        actions: [{ write: 'specs/QA_REPORT.md', content: '# QA (draft)\n' }],
        say: 'Reviewing.',
        hang: true,
      },
    ];
    project.scenario(scenario);
    const clock = new FakeClock();
    const run = await runInProcess(project, {
      clock,
      gates: scriptedGates({ spec: YES }),
      onEvent: (event) => {
        if (event.type === 'agent.output' && event.role === 'qa') clock.advance(1_800_000);
      },
    });
    expect(run.states.slice(-2)).toEqual(['QA', 'FAILED']);
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'phase_timeout' });
    expect(run.outcome.detail).toContain('the QA phase ran past its timeout (workflow.timeouts.qa: 1800s)');
    expect(existsSync(`${project.scenarioPath}.qa.pid`)).toBe(true);
    expect(survivorsOf(project.scenarioPath)).toEqual([]);
    expect(project.exists('specs/QA_REPORT.md')).toBe(false);
    expect(project.status()).toBe('');
  });

  it('PR → FAILED on the phase timeout (gh hangs), and PR → COMPLETED when it answers', async () => {
    project = workflowProject((config) => {
      config.workflow.timeouts.pr = 2;
    });
    project.scenario(happyScenario());
    const run = await runInProcess(project, {
      gates: scriptedGates({ spec: YES, qa: YES }),
      env: { RELAIS_GH_HANG: '1' },
    });
    expect(run.states.slice(-3)).toEqual(['AWAITING_QA_VALIDATION', 'PR', 'FAILED']);
    expect(run.outcome.reason).toBe('phase_timeout');
    covers('AWAITING_QA_VALIDATION-approve', 'PR-fail');

    // The same workflow resumes at PR and completes once gh answers.
    const again = await runInProcess(project, { gates: scriptedGates({ resume: YES }) });
    expect(again.states).toEqual(['PR', 'COMPLETED']);
    expect(again.outcome.prUrl).toBe('https://github.com/example/greeting/pull/7');
    covers('PR-exit_signal');
  });

  // `ralphy abort` in every other state it can reach: the running agent or process is stopped,
  // and the workflow ends FAILED (aborted) whatever it was doing.
  it.each([
    ['SPECIFICATION', 'agent', 'spec'],
    ['AWAITING_SPEC_VALIDATION', 'gate', 'spec'],
    ['QA', 'agent', 'qa'],
    ['AWAITING_QA_VALIDATION', 'gate', 'qa'],
    ['PR', 'gh', ''],
  ] as const)('%s → FAILED on ralphy abort', async (state, where, who) => {
    project = workflowProject();
    const scenario = happyScenario();
    if (where === 'agent' && who === 'spec') scenario.spec = [{ hang: true }];
    if (where === 'agent' && who === 'qa') scenario.qa = [{ hang: true }];
    project.scenario(scenario);
    const paths = workspacePaths(project.root, 'relais');
    const abortNow = () => void requestAbort(paths, new Date());
    let aborted: () => void = () => undefined;
    const abortSeen = new Promise<void>((resolve) => {
      aborted = resolve;
    });
    // A gate that is still waiting when the abort lands: the engine ends the wait itself.
    let inPr = false;
    const waitAtGate = async () => {
      abortNow();
      await abortSeen;
      return { decision: 'reject' as const, by: 'nobody' as const };
    };
    const run = await runInProcess(project, {
      gates: scriptedGates({
        spec: where === 'gate' && who === 'spec' ? waitAtGate : YES,
        qa: where === 'gate' && who === 'qa' ? waitAtGate : YES,
      }),
      env: where === 'gh' ? { RELAIS_GH_HANG: '1' } : {},
      onEvent: (event) => {
        if (event.type === 'log' && event.message.startsWith('ralphy abort')) aborted();
        if (where === 'agent' && event.type === 'agent.started' && event.role === who) abortNow();
        if (event.type === 'workflow.changed') inPr = event.state === 'PR';
        // In PR, after the final checks: the abort lands while git pushes or gh hangs.
        if (where === 'gh' && inPr && event.type === 'verify.finished') abortNow();
      },
    });
    expect(run.states.slice(-2)).toEqual([state, 'FAILED']);
    expect(run.outcome.reason).toBe('aborted');
    expect(project.status()).toBe('');
    covers(`${state}-abort`);
  });

  // Seed 004's PLANNING (workflowProject turns it off; plannerProject turns it back on).
  it('IDLE → PLANNING → SPECIFICATION: the planner asks, the human says proceed, the spec starts', async () => {
    project = plannerProject();
    project.scenario({
      ...happyScenario(),
      planner: [answer(proceedGate()), answer(ready('Greet people by name.', []))],
    });
    const run = await runInProcess(project, {
      gates: scriptedGates({ plan: { decision: 'answer', by: 'human', text: 'proceed' }, spec: NO }),
    });
    expect(run.states).toEqual(['PLANNING', 'SPECIFICATION', 'AWAITING_SPEC_VALIDATION', 'REJECTED']);
    expect(workflowFile(project).completed_phases).toEqual([
      'PLANNING',
      'SPECIFICATION',
      'AWAITING_SPEC_VALIDATION',
    ]);
    covers('IDLE-start', 'PLANNING-ready');
  });

  it('PLANNING → FAILED when the planner CLI fails after its retries (agent_failed)', async () => {
    project = plannerProject((config) => {
      config.workflow.agent_retries = 1;
    });
    project.scenario({
      planner: [
        { result: 'boom', is_error: true, exit_code: 1 },
        { result: 'boom', is_error: true, exit_code: 1 },
      ],
    });
    const run = await runInProcess(project, { gates: scriptedGates({}) });
    expect(run.states).toEqual(['PLANNING', 'FAILED']);
    expect(run.outcome.reason).toBe('agent_failed');
    expect(run.outcome.detail).toContain('planner: claude reported an error');
    expect(project.calls().filter((c) => c.role === 'planner')).toHaveLength(2);
    covers('PLANNING-fail');
  });

  it("PLANNING → FAILED on ralphy abort while the planner's question waits", async () => {
    project = plannerProject();
    project.scenario({ planner: [answer(ask('reporter', [{ q: 'Full name or first name?' }]))] });
    const paths = workspacePaths(project.root, 'relais');
    let aborted: () => void = () => undefined;
    const abortSeen = new Promise<void>((resolve) => {
      aborted = resolve;
    });
    const run = await runInProcess(project, {
      gates: scriptedGates({
        plan: async () => {
          void requestAbort(paths, new Date());
          await abortSeen;
          return { decision: 'reject', by: 'nobody' };
        },
      }),
      onEvent: (event) => {
        if (event.type === 'log' && event.message.startsWith('ralphy abort')) aborted();
      },
    });
    expect(run.states).toEqual(['PLANNING', 'FAILED']);
    expect(run.outcome.reason).toBe('aborted');
    covers('PLANNING-abort');
  });

  it('every transition of the table is exercised above', () => {
    const edges = allTransitions().map(([from, event]) => `${from}-${event}`);
    const missing = edges.filter((e) => !COVERED.has(e));
    expect(missing).toEqual([]);
  });
});
