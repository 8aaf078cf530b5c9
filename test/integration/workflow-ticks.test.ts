import { afterEach, describe, expect, it } from 'vitest';
import { plainReporter } from '../../source/cli/front-end/plain-reporter.js';
import type { StampedEvent } from '../../source/engine/events.js';
import { FakeClock } from '../support/fake-clock.js';
import { BUILDER_OK, type TestProject, task } from '../support/project.js';
import {
  happyScenario,
  NO,
  runInProcess,
  scriptedGates,
  workflowFile,
  workflowProject,
  YES,
} from '../support/workflow.js';

// The default `ticks` engine of IMPLEMENTATION, end to end in process (real fake-claude children):
// a usage limit waits and runs the same task again, the orchestrator's question reaches the
// human and their answer the next tick, and a stopped tick shows claimed next to verified.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

const orchestratorCalls = () => (project as TestProject).calls().filter((c) => c.role === 'orchestrator');

function taskEvents(events: StampedEvent[]) {
  return events.flatMap((e) => (e.type === 'task.updated' ? [e] : []));
}

describe('ticks engine', () => {
  it('a usage limit in a tick waits for the reset (countdown on the plain lines), then runs the same task again, no tick counted', async () => {
    project = workflowProject((config) => {
      config.workflow.max_ticks_per_task = 1; // a counted tick for the limit would end the workflow
      config.workflow.timeouts.implementation = 600; // the hour-long wait is not the phase's
    });
    const scenario = happyScenario();
    scenario.orchestrator = [
      { is_error: true, result: "You've hit your limit · resets 11am (UTC)", exit_code: 1 },
      ...(scenario.orchestrator ?? []),
    ];
    project.scenario(scenario);
    const clock = new FakeClock(Date.parse('2026-11-22T10:00:00Z'));
    let out = '';
    const plain = plainReporter(
      { cwd: '/', env: {}, stdout: { write: (t: string) => (out += t) }, stderr: { write: () => true } },
      clock,
    );
    let waitStarted = false;
    let seenWaiting: any = null;
    clock.onSleep = (ms) => {
      if (!waitStarted) return;
      waitStarted = false;
      seenWaiting = workflowFile(project as TestProject);
      // An hour later the limit has reset.
      setImmediate(() => clock.advance(ms));
    };
    const run = await runInProcess(project, {
      clock,
      gates: scriptedGates({ spec: YES, qa: NO }),
      onEvent: (event) => {
        plain(event);
        if (event.type === 'workflow.waiting') waitStarted = true;
      },
    });
    expect(run.events.find((e) => e.type === 'workflow.waiting')).toMatchObject({
      until: '2026-11-22T11:00:00.000Z',
      reason: "You've hit your limit · resets 11am (UTC)",
    });
    expect(seenWaiting).toMatchObject({
      state: 'IMPLEMENTATION',
      status: 'waiting',
      waiting_until: '2026-11-22T11:00:00.000Z',
    });
    // Past IMPLEMENTATION: both tasks done, each in one counted tick; the limit was no failure.
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'rejected_at_qa' });
    expect(orchestratorCalls()).toHaveLength(3);
    const workflow = workflowFile(project);
    expect(workflow.tasks.map((t: any) => [t.status, t.ticks])).toEqual([
      ['completed', 1],
      ['completed', 1],
    ]);
    expect(workflow.waiting_until).toBeNull();
    // The same task's goal again, after the wait.
    expect(orchestratorCalls()[1]?.prompt).toContain('implement task 1 of specs/TASKS.md');
    // The countdown, on the injected clock: every whole minute left, then 10 s.
    const countdown = out.split('\n').filter((l) => l.includes('Waiting for the usage limit:'));
    expect(countdown).toHaveLength(60);
    expect(countdown[0]).toMatch(
      /^\[\d{2}:\d{2}:\d{2}\] Waiting for the usage limit: 59m00s left \(resets at /,
    );
    expect(countdown.at(-2)).toContain('Waiting for the usage limit: 1m00s left');
    expect(countdown.at(-1)).toContain('Waiting for the usage limit: 10s left');
  });

  it("the orchestrator's question goes to the human at a needs-input gate, and the answer into the next tick's prompt", async () => {
    project = workflowProject();
    const scenario = happyScenario();
    const question = task({
      task_id: 'Q1',
      task_kind: 'question',
      intent: 'Ask how to greet',
      question: { prompt: 'Formal or casual greeting?', choices: ['formal', 'casual'] },
      scope: {
        allowed_globs: ['src/a.ts'],
        forbidden_globs: [],
        allow_new_files: false,
        allow_lockfile_changes: false,
      },
    });
    scenario.orchestrator = [{ result_json: question }, ...(scenario.orchestrator ?? [])];
    scenario.builder = [
      { result_json: { ...BUILDER_OK, summary: 'asked', files_intended: [] } },
      ...(scenario.builder ?? []),
    ];
    project.scenario(scenario);
    const gates = scriptedGates({
      spec: YES,
      input: { decision: 'answer', by: 'human', text: 'Formal, please.' },
      qa: NO,
    });
    const run = await runInProcess(project, { gates });
    const asked = gates.asked.find((g) => g.gate === 'input');
    expect(asked).toMatchObject({
      title: 'The orchestrator asks about task 1',
      lines: ['Formal or casual greeting?', '  - formal', '  - casual'],
      answer: 'text',
    });
    expect(run.events).toContainEqual(
      expect.objectContaining({ type: 'gate.resolved', gate: 'input', decision: 'answer', by: 'human' }),
    );
    // The next tick for the same task carries the question and the human's answer.
    const next = orchestratorCalls()[1];
    expect(next?.prompt).toContain('implement task 1 of specs/TASKS.md');
    expect(next?.prompt).toContain(
      'You asked: Formal or casual greeting?\nThe human answered: Formal, please.',
    );
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'rejected_at_qa' });
    const workflow = workflowFile(project);
    expect(workflow.tasks.map((t: any) => t.status)).toEqual(['completed', 'completed']);
    // Consumed by the task it was for.
    expect(workflow.pending_answer).toBeNull();
    expect(workflow.gate_decisions.map((g: any) => `${g.gate}:${g.decision}:${g.by}`)).toContain(
      'input:answer:human',
    );
  });

  // Issue 15: a builder that answers with a question instead of its result JSON raises the
  // question gate; it is not STOP_BUILDER_OUTPUT_INVALID retried until max_ticks_per_task.
  it("a builder's question goes to the human at the needs-input gate, and costs no tick", async () => {
    project = workflowProject((config) => {
      config.workflow.max_ticks_per_task = 1;
    });
    const scenario = happyScenario();
    const [first, ...rest] = scenario.orchestrator ?? [];
    scenario.orchestrator = [first, first, ...rest] as typeof rest;
    scenario.builder = [
      { result: 'Before I edit src/a.ts: should greet() say "Hello" or "Good day"?' },
      ...(scenario.builder ?? []),
    ];
    project.scenario(scenario);
    const gates = scriptedGates({
      spec: YES,
      input: { decision: 'answer', by: 'human', text: 'Hello.' },
      qa: YES,
    });
    const run = await runInProcess(project, { gates });
    const asked = gates.asked.find((g) => g.gate === 'input');
    expect(asked).toMatchObject({ title: 'builder-agent needs input', answer: 'text' });
    expect(asked?.lines[0]).toContain('should greet() say "Hello" or "Good day"?');
    expect(orchestratorCalls()[1]?.prompt).toContain('The human answered:\nHello.');
    expect(run.outcome, JSON.stringify(run.outcome)).toMatchObject({ state: 'COMPLETED' });
    const workflow = workflowFile(project);
    expect(workflow.tasks.map((t: any) => t.status)).toEqual(['completed', 'completed']);
  }, 180_000);

  it('a stopped tick shows on its task: what the builder claimed next to the stop code or the failed verification', async () => {
    project = workflowProject((config) => {
      config.verification.templates.push({ id: 'fail', cmd: 'node', args: ['-e', 'process.exit(3)'] });
    });
    const scenario = happyScenario();
    const [t1, t2] = scenario.orchestrator ?? [];
    const failing = {
      result_json: { ...(t1 as any).result_json, verification: { fast: ['fail'], slow: [] } },
    };
    // The third proposal is a re-plan: the first plan failed, so the same one would be refused.
    const replanned = {
      result_json: { ...(t1 as any).result_json, intent: 'Implement task 1 again, inside src/a.ts only' },
    };
    scenario.orchestrator = [t1, failing, replanned, t2];
    const [goodA, goodB] = scenario.builder ?? [];
    scenario.builder = [
      {
        // Out of task 1's scope (src/a.ts only): stopped by the judge, rolled back.
        actions: [{ write: 'src/b.ts', content: 'export const b = 2;\n' }],
        result_json: { ...BUILDER_OK, summary: 'all done, I promise' },
      },
      {
        actions: [{ write: 'src/a.ts', content: 'export const greet = 1;\n' }],
        result_json: { ...BUILDER_OK, summary: 'tests pass' },
      },
      goodA,
      goodB,
    ];
    project.scenario(scenario);
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: NO }) });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'rejected_at_qa' });
    const task1 = taskEvents(run.events).filter((e) => e.number === 1);
    expect(task1.map((e) => e.status)).toEqual([
      'pending',
      'in_progress',
      'in_progress',
      'in_progress',
      'completed',
    ]);
    expect(task1[2]).toMatchObject({ claimed: 'all done, I promise' });
    expect(task1[2]?.verified).toMatch(/^STOP_SCOPE_VIOLATION_OUTSIDE_ALLOWED/);
    expect(task1[2]?.verified).toContain('src/b.ts');
    expect(task1[3]).toMatchObject({ claimed: 'tests pass' });
    expect(task1[3]?.verified).toMatch(/^STOP_VERIFY_FAILED_FAST/);
    expect(task1[3]?.verified).toContain('verification: fail ✗ exit 3');
    // The verified tick replaces both.
    expect(task1[4]).toMatchObject({ claimed: 'did it' });
    expect(task1[4]?.verified).toMatch(/^SUCCESS, committed/);
    expect(project.read('src/b.ts')).toContain('bye');
  }, 180_000);

  // Issue 15: re-planning with a task fingerprint before escalating. After a stopped tick the
  // orchestrator is told to re-plan; the same plan proposed again is refused before anything is
  // built (STOP_PLAN_REPEATED) and the human is asked how to do it differently.
  it('the same failed plan proposed again is refused before building, then escalated to the human', async () => {
    project = workflowProject((config) => {
      config.verification.templates.push({ id: 'fail', cmd: 'node', args: ['-e', 'process.exit(3)'] });
    });
    const scenario = happyScenario();
    const [t1, t2] = scenario.orchestrator ?? [];
    const failing = {
      result_json: { ...(t1 as any).result_json, verification: { fast: ['fail'], slow: [] } },
    };
    // Same plan again under another task id: the fingerprint ignores the name.
    const again = { result_json: { ...failing.result_json, task_id: 'T1-again' } };
    scenario.orchestrator = [failing, again, t1, t2];
    const [goodA, goodB] = scenario.builder ?? [];
    scenario.builder = [
      { actions: [{ write: 'src/a.ts', content: 'export const greet = 1;\n' }], result_json: BUILDER_OK },
      goodA,
      goodB,
    ];
    project.scenario(scenario);
    const gates = scriptedGates({
      spec: YES,
      input: { decision: 'answer', by: 'human', text: 'Drop the failing check; verify with the tests.' },
      qa: NO,
    });
    const run = await runInProcess(project, { gates });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'rejected_at_qa' });
    // The orchestrator was told to re-plan after the first stop.
    expect(orchestratorCalls()[1]?.prompt).toContain('Re-plan: propose a different approach');
    // The repeat was refused before the builder ran: three builder runs for three built plans.
    expect((project as TestProject).calls().filter((c) => c.role === 'builder')).toHaveLength(3);
    const refused = run.events.find(
      (e: any) => e.type === 'tick.finished' && e.code === 'STOP_PLAN_REPEATED',
    );
    expect(refused).toMatchObject({ verdict: 'stop' });
    const asked = gates.asked.find((g) => g.gate === 'input');
    expect(asked?.lines[0]).toContain(
      'proposed again the plan that already failed with STOP_VERIFY_FAILED_FAST',
    );
    expect(orchestratorCalls()[2]?.prompt).toContain('Drop the failing check; verify with the tests.');
    expect(workflowFile(project).tasks.map((t: any) => t.status)).toEqual(['completed', 'completed']);
  }, 180_000);
  // Issue 15: the failed plans live in WORKFLOW.json, so a resumed workflow still refuses the plan
  // that failed, even reworded and under another task id; the human is asked how to go on.
  it('a plan that failed before a resume is refused after it, reworded or not', async () => {
    project = workflowProject((config) => {
      config.workflow.max_ticks_per_task = 1;
      config.verification.templates.push({ id: 'fail', cmd: 'node', args: ['-e', 'process.exit(3)'] });
    });
    const scenario = happyScenario();
    const [t1, t2] = scenario.orchestrator ?? [];
    const base = (t1 as any).result_json;
    const failing = {
      result_json: {
        ...base,
        intent: 'Write greet into src/a.ts',
        verification: { fast: ['fail'], slow: [] },
        builder: { ...base.builder, instructions: 'Write the greet function into src/a.ts.' },
      },
    };
    scenario.orchestrator = [failing];
    scenario.builder = [
      { actions: [{ write: 'src/a.ts', content: 'export const greet = 1;\n' }], result_json: BUILDER_OK },
    ];
    project.scenario(scenario);
    const first = await runInProcess(project, { gates: scriptedGates({ spec: YES }) });
    expect(first.outcome).toMatchObject({ state: 'FAILED', reason: 'tick_stopped' });
    expect(workflowFile(project).tasks[0].failed_plans).toMatchObject([
      { code: 'STOP_VERIFY_FAILED_FAST', intent: 'Write greet into src/a.ts' },
    ]);

    // The fix the failure names (more ticks), then a resume: a new process, a fresh plan memory.
    (project as TestProject).commitConfig((config) => {
      config.workflow.max_ticks_per_task = 3;
    });
    const reworded = {
      result_json: {
        ...failing.result_json,
        task_id: 'T1-retry',
        intent: 'writes the greet function into src/a.ts',
        builder: { ...base.builder, instructions: 'Write greet into src/a.ts' },
      },
    };
    const resumed = happyScenario();
    resumed.orchestrator = [reworded, t1, t2];
    project.scenario(resumed);
    const gates = scriptedGates({
      resume: YES,
      input: { decision: 'answer', by: 'human', text: 'Use the passing check instead.' },
      qa: NO,
    });
    const second = await runInProcess(project, { gates });
    const refused = second.events.find(
      (e: any) => e.type === 'tick.finished' && e.code === 'STOP_PLAN_REPEATED',
    );
    expect(refused).toBeDefined();
    // Refused before building: two builder runs for the two plans that were built.
    expect((project as TestProject).calls().filter((c) => c.role === 'builder')).toHaveLength(2);
    expect(gates.asked.find((g) => g.gate === 'input')?.lines[0]).toContain(
      'proposed again the plan that already failed with STOP_VERIFY_FAILED_FAST',
    );
    expect(second.outcome).toMatchObject({ state: 'FAILED', reason: 'rejected_at_qa' });
    expect(workflowFile(project).tasks.map((t: any) => t.status)).toEqual(['completed', 'completed']);
  }, 180_000);
});
