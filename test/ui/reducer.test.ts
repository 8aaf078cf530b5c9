import { describe, expect, test } from 'vitest';
import type { EngineEvent } from '../../source/engine/events.js';
import { outputLinesOf } from '../../source/ui/store/output-lines.js';
import { elapsedMs, finalResult, phaseLabel } from '../../source/ui/store/selectors.js';
import { enter, Script, T0 } from './helpers.js';

const started: EngineEvent = {
  type: 'workflow.started',
  project: '/tmp/demo',
  prd_title: 'Todo app',
  base_branch: 'main',
  feature_branch: 'ralphy/todo',
  engine: 'ticks',
  resumed_from: null,
  max_cost_usd: 5,
  tasks: [
    { number: 1, title: 'Parse PRD', status: 'pending' },
    { number: 2, title: 'Render list', status: 'pending' },
  ],
};

describe('workflow timeline', () => {
  test('phases run in seed order with their durations; the header follows', () => {
    const s = new Script()
      .emit(started)
      .emit(enter('SPECIFICATION'), 62_000)
      .emit(enter('AWAITING_SPEC_VALIDATION', 'waiting'), 12_000)
      .emit({ type: 'gate.resolved', gate: 'spec', decision: 'approve', by: 'human', answer: null })
      .emit(enter('IMPLEMENTATION'), 5_000);
    const state = s.state;
    expect(state.phases.map((p) => p.status)).toEqual([
      'done',
      'done',
      'running',
      'pending',
      'pending',
      'pending',
    ]);
    expect(state.phases[0]?.endedAtMs).toBe(T0 + 62_000);
    expect(state.phases[1]?.gates).toEqual([
      { gate: 'spec', decision: 'approve', by: 'human', answer: null },
    ]);
    expect(state.phases[2]?.startedAtMs).toBe(T0 + 74_000);
    expect(state.header).toMatchObject({
      title: 'Todo app',
      branch: 'ralphy/todo',
      budgetUsd: 5,
      startedAtMs: T0,
    });
    expect(phaseLabel(state)).toBe('IMPLEMENTATION');
  });

  test('a failure closes the running phase as failed and records the end', () => {
    const state = new Script()
      .emit([started, enter('SPECIFICATION'), enter('AWAITING_SPEC_VALIDATION', 'waiting')])
      .emit(enter('IMPLEMENTATION'))
      .emit({
        type: 'workflow.changed',
        state: 'FAILED',
        status: 'failed',
        reason: 'aborted',
        detail: 'by the human',
      }).state;
    expect(state.phases[2]?.status).toBe('failed');
    expect(state.end).toMatchObject({ state: 'FAILED', reason: 'aborted', detail: 'by the human' });
  });

  test('a rejected gate ends the phase as rejected', () => {
    const state = new Script()
      .emit([started, enter('SPECIFICATION'), enter('AWAITING_SPEC_VALIDATION', 'waiting')])
      .emit({ type: 'gate.resolved', gate: 'spec', decision: 'reject', by: 'human', answer: null })
      .emit({
        type: 'workflow.changed',
        state: 'REJECTED',
        status: 'rejected',
        reason: null,
        detail: null,
      }).state;
    expect(state.phases[1]?.status).toBe('rejected');
    expect(state.end?.state).toBe('REJECTED');
  });

  test('a resume marks the phases before it as done, without times', () => {
    const state = new Script().emit({ ...started, resumed_from: 'QA' }).emit(enter('QA')).state;
    expect(state.phases.map((p) => p.status)).toEqual([
      'done',
      'done',
      'done',
      'running',
      'pending',
      'pending',
    ]);
    expect(state.phases[0]?.startedAtMs).toBeNull();
  });

  test('a text gate answered during implementation shows under it; the gate closes', () => {
    const s = new Script().emit([started, enter('IMPLEMENTATION')]);
    s.emit({
      type: 'gate.requested',
      gate: 'input',
      title: 'dev-agent needs input',
      lines: ['Which DB?'],
      answer: 'text',
    });
    expect(s.state.gate?.answer).toBe('text');
    s.emit({ type: 'gate.resolved', gate: 'input', decision: 'answer', by: 'human', answer: 'SQLite' });
    expect(s.state.gate).toBeNull();
    expect(s.state.phases[2]?.gates[0]).toMatchObject({ decision: 'answer', answer: 'SQLite' });
  });

  test('the resume question, answered before the workflow starts, shows under the first phase entered', () => {
    const s = new Script()
      .emit({
        type: 'gate.requested',
        gate: 'resume',
        title: 'Resume the interrupted workflow?',
        lines: ['y: resume at QA'],
        answer: 'yes_no',
      })
      .emit({ type: 'gate.resolved', gate: 'resume', decision: 'approve', by: 'human', answer: null });
    expect(s.state.gate).toBeNull();
    s.emit({ ...started, resumed_from: 'QA' }).emit(enter('QA'));
    const qa = s.state.phases.find((p) => p.state === 'QA');
    expect(qa?.gates).toEqual([{ gate: 'resume', decision: 'approve', by: 'human', answer: null }]);
    expect(s.state.earlyGates).toEqual([]);
    // Kept once: entering the next phase does not carry it again.
    s.emit(enter('AWAITING_QA_VALIDATION', 'waiting'));
    expect(s.state.phases.flatMap((p) => p.gates)).toHaveLength(1);
  });
});

describe('header elapsed time', () => {
  const tickFinished: EngineEvent = {
    type: 'tick.finished',
    run_id: 'r1',
    verdict: 'success',
    code: 'SUCCESS',
    remediation: 'Nothing to do.',
    detail: null,
    blast_radius_line: '1 file',
    commit: 'abc1234',
    report_path: null,
  };

  test("a workflow's implementation tick ends the tick, not the run: elapsed keeps running in QA", () => {
    const s = new Script()
      .emit([started, enter('IMPLEMENTATION')])
      .emit({ type: 'run.started', run_id: 'r1', command: 'tick', project: '/tmp/demo' }, 10_000)
      .emit(tickFinished)
      .emit(enter('QA'), 50_000);
    s.wait(0);
    expect(s.state.header.endedAtMs).toBeNull();
    expect(elapsedMs(s.state)).toBe(60_000);
    s.wait(30_000);
    expect(elapsedMs(s.state)).toBe(90_000);
    s.emit({
      type: 'run.finished',
      state: 'COMPLETED',
      status: 'completed',
      reason: null,
      detail: null,
      pr_url: null,
      next_steps: [],
    });
    s.wait(30_000);
    expect(elapsedMs(s.state)).toBe(90_000);
  });

  test('in a loop, a tick ends a tick; loop.finished ends the work', () => {
    const s = new Script('loop')
      .emit({ type: 'run.started', run_id: 'r1', command: 'loop', project: '/tmp/demo' }, 10_000)
      .emit(tickFinished, 5_000);
    s.wait(0);
    expect(elapsedMs(s.state)).toBe(15_000);
    s.emit({
      type: 'loop.finished',
      mode: 'milestone',
      ticks: 1,
      verdicts: { SUCCESS: 1 },
      cost_usd: 0,
      calls: 2,
      reason: 'milestone done',
      exit: 'success',
    });
    s.wait(20_000);
    expect(elapsedMs(s.state)).toBe(15_000);
  });

  test('a lone tick (relais run) in the loop view: its end is the end of the work', () => {
    const s = new Script('loop')
      .emit({ type: 'run.started', run_id: 'r1', command: 'run', project: '/tmp/demo' }, 10_000)
      .emit(tickFinished);
    s.wait(20_000);
    expect(elapsedMs(s.state)).toBe(10_000);
  });
});

describe('output lines', () => {
  test("a failed cycle's line keeps its code and remediation, as the plain reporter prints them", () => {
    const at = new Date(T0).toISOString();
    const lines = outputLinesOf({
      type: 'cycle.finished',
      cycle_id: 'c1',
      action: 'implement',
      reply: 'CYCLE_FAIL',
      phase: 'execute',
      details: 'verification failed',
      code: 'STOP_VERIFY_FAILED_FAST',
      remediation: 'Read the verify log and fix the failing check.',
      at,
    });
    expect(lines.map((l) => l.text)).toEqual([
      'CYCLE_FAIL: verification failed',
      'STOP_VERIFY_FAILED_FAST · Fix: Read the verify log and fix the failing check.',
    ]);
    expect(lines[1]?.kind).toBe('warn');
    const ok = outputLinesOf({
      type: 'cycle.finished',
      cycle_id: 'c1',
      action: 'implement',
      reply: 'CYCLE_OK',
      phase: 'execute',
      details: 'task done',
      code: 'SUCCESS',
      remediation: 'Nothing to do.',
      at,
    });
    expect(ok.map((l) => l.text)).toEqual(['CYCLE_OK: task done']);
  });
});

describe('tasks: claimed and verified stay apart', () => {
  test('an agent claim never turns into a verification', () => {
    const s = new Script().emit(started);
    s.emit({
      type: 'task.updated',
      number: 2,
      title: 'Render list',
      status: 'completed',
      claimed: 'done',
      verified: null,
    });
    const claimedOnly = s.state.tasks.find((t) => t.number === 2);
    expect(claimedOnly).toMatchObject({ status: 'completed', claimed: 'done', verified: null });
    s.emit({
      type: 'task.updated',
      number: 2,
      title: 'Render list',
      status: 'completed',
      claimed: 'done',
      verified: 'SUCCESS abc1234',
    });
    expect(s.state.tasks.map((t) => [t.number, t.verified])).toEqual([
      [1, null],
      [2, 'SUCCESS abc1234'],
    ]);
  });
});

describe('agent, breaker, judge, verification', () => {
  test("a loop's cost is the sum of agent calls; liveness follows output and activity", () => {
    const s = new Script('loop')
      .emit({ type: 'agent.started', role: 'dev', attempt: 1, command: 'claude', model: 'sonnet' }, 3_000)
      .emit({ type: 'agent.output', role: 'dev', text: 'working', kind: 'text' }, 2_000)
      .emit({ type: 'agent.tool', role: 'dev', tool: 'Read', target: 'a.ts' }, 1_000)
      .emit({
        type: 'agent.finished',
        role: 'dev',
        ok: true,
        exit_code: 0,
        cost_usd: 0.25,
        duration_ms: 6000,
        summary: '',
      })
      .emit({
        type: 'agent.finished',
        role: 'qa',
        ok: true,
        exit_code: 0,
        cost_usd: 0.125,
        duration_ms: 1,
        summary: '',
      });
    const state = s.state;
    expect(state.header.costUsd).toBeCloseTo(0.375);
    expect(state.activity).toEqual({ lastOutputAtMs: T0 + 3_000, lastActivityAtMs: T0 + 5_000 });
  });

  test("a workflow's cost is what the runner recorded (workflow.started, workflow.spend), not the agents' sum", () => {
    const finished = (cost: number) =>
      ({
        type: 'agent.finished',
        role: 'dev',
        ok: true,
        exit_code: 0,
        cost_usd: cost,
        duration_ms: 1,
        summary: '',
      }) as const;
    const spend = (total: number) =>
      ({
        type: 'workflow.spend',
        phase: 'IMPLEMENTATION',
        cost_usd: total - 0.5,
        calls: 2,
        max_cost_usd: null,
        max_calls: null,
        total_cost_usd: total,
      }) as const;
    const s = new Script().emit({
      type: 'workflow.started',
      project: 'demo',
      prd_title: 'Todo',
      base_branch: 'main',
      feature_branch: 'ralphy/todo',
      engine: 'ticks',
      resumed_from: 'IMPLEMENTATION',
      max_cost_usd: null,
      cost_usd: 0.5,
      tasks: [],
    });
    // A resume opens with the recorded spend; an agent's own report does not move it.
    expect(s.state.header.costUsd).toBe(0.5);
    s.emit(finished(0.1)).emit(finished(0.2));
    expect(s.state.header.costUsd).toBe(0.5);
    s.emit(spend(0.8));
    expect(s.state.header.costUsd).toBe(0.8);
    // No workflow cap: the milestone ledger's cap is not shown as the workflow's.
    s.emit({
      type: 'ledger.updated',
      milestone: 'M1',
      used: { ticks: 1, orchestrator_calls: 1, builder_calls: 1, verify_runs: 1, cost_usd: 0.3 },
      caps: { ticks: 10, orchestrator_calls: 10, builder_calls: 10, verify_runs: 10, cost_usd: 80 },
    });
    expect(s.state.header.budgetUsd).toBeNull();
  });

  test('breaker closed -> half-open -> open keeps the last trigger through a reset', () => {
    const s = new Script();
    const breaker = (
      state: 'closed' | 'half_open' | 'open',
      attempts: number,
      trigger: 'inactivity' | null,
    ): EngineEvent => ({
      type: 'breaker.changed',
      breaker: { state, attempts, max_attempts: 3, last_trigger: trigger },
      trigger,
      detail: trigger ? 'inactivity detected (60s without output)' : null,
      log: [],
    });
    s.emit(breaker('half_open', 1, 'inactivity'));
    expect(s.state.breaker).toMatchObject({
      snapshot: { state: 'half_open', attempts: 1 },
      trigger: 'inactivity',
    });
    s.emit(breaker('open', 3, 'inactivity'));
    expect(s.state.breaker?.snapshot.state).toBe('open');
    s.emit(breaker('closed', 0, null));
    expect(s.state.breaker).toMatchObject({
      snapshot: { state: 'closed' },
      detail: 'inactivity detected (60s without output)',
    });
  });

  test('a verification goes running -> passed, another running -> timed out', () => {
    const s = new Script()
      .emit({ type: 'verify.started', template_id: 'lint', phase: 'fast', cmd: 'npm', args: ['run', 'lint'] })
      .emit({ type: 'verify.started', template_id: 'e2e', phase: 'slow', cmd: 'npm', args: ['test'] }, 4_000);
    expect(s.state.verifications.map((v) => v.status)).toEqual(['running', 'running']);
    const run = { cmd: 'npm', args: ['run', 'lint'], duration_ms: 1200 };
    s.emit({
      type: 'verify.finished',
      summary: 'ok',
      template_id: 'lint',
      phase: 'fast',
      exit_code: 0,
      timed_out: false,
      ...run,
    });
    s.emit({
      type: 'verify.finished',
      summary: 'timeout',
      template_id: 'e2e',
      phase: 'slow',
      exit_code: -1,
      timed_out: true,
      ...run,
    });
    expect(s.state.verifications.map((v) => [v.templateId, v.status, v.exitCode])).toEqual([
      ['lint', 'passed', 0],
      ['e2e', 'timed_out', -1],
    ]);
  });

  test('the judge reports the blast radius and violations with their code', () => {
    const state = new Script().emit({
      type: 'judge.finished',
      code: 'STOP_SCOPE_VIOLATION_FORBIDDEN',
      blast_radius: { files_touched: 3, lines_added: 120, lines_deleted: 14, new_files: 1 },
      blast_radius_line: '3 files, +120/-14, 1 new',
      violations: ['forbidden: .env'],
      touched_paths: ['src/a.ts', '.env', 'src/b.ts'],
    }).state;
    expect(state.blast).toMatchObject({
      filesTouched: 3,
      linesAdded: 120,
      code: 'STOP_SCOPE_VIOLATION_FORBIDDEN',
      violations: ['forbidden: .env'],
      touchedTotal: 3,
    });
  });
});

describe('loop view', () => {
  test('ticks: running tick with its phase, then a finished row with verdict and duration', () => {
    const s = new Script('loop')
      .emit({ type: 'run.started', run_id: 'r1', command: 'loop', project: '/tmp/demo' })
      .emit({ type: 'phase.changed', phase: 'BUILD' })
      .emit({
        type: 'task.proposed',
        task_id: 'T-1',
        milestone_id: 'M1',
        task_kind: 'execute',
        intent: 'Add the parser',
        mode: 'claude_code',
      });
    expect(s.state.runningTick).toMatchObject({ tick: 1, phase: 'BUILD' });
    expect(phaseLabel(s.state)).toBe('tick 1, step BUILD');
    expect(s.state.proposed?.taskId).toBe('T-1');
    s.emit({
      type: 'ledger.updated',
      milestone: 'M1',
      used: { ticks: 1, orchestrator_calls: 1, builder_calls: 1, verify_runs: 0, cost_usd: 0.1 },
      caps: { ticks: 10, orchestrator_calls: 20, builder_calls: 10, verify_runs: 30, cost_usd: 2 },
    });
    s.wait(30_000).emit({
      type: 'loop.tick',
      tick: 1,
      run_id: 'r1',
      verdict: 'success',
      code: 'SUCCESS',
      task_id: 'T-1',
      milestone: 'M1',
      blast_radius_line: '1 file',
      cost_usd: 0.1,
      commit: 'abc1234',
      control: null,
    });
    const state = s.state;
    expect(state.runningTick).toBeNull();
    expect(state.ticks[0]).toMatchObject({ tick: 1, verdict: 'success', durationMs: 30_000 });
    expect(state.header.budgetUsd).toBe(2);
    s.emit({
      type: 'loop.finished',
      mode: 'milestone',
      ticks: 1,
      verdicts: { SUCCESS: 1 },
      cost_usd: 0.1,
      calls: 2,
      reason: 'milestone done',
      exit: 'success',
    });
    expect(finalResult(s.state)).toMatchObject({
      ok: true,
      headline: expect.stringContaining('Loop success'),
    });
  });

  test('a single tick (relais run) shows its outcome as the result once the work is over', () => {
    const s = new Script('loop').emit({
      type: 'tick.finished',
      run_id: 'r1',
      verdict: 'stop',
      code: 'STOP_VERIFY_FAILED_FAST',
      remediation: 'Read the verify log.',
      detail: 'lint failed',
      blast_radius_line: '1 file',
      commit: null,
      report_path: 'relais/REPORT.md',
    });
    expect(finalResult(s.state)).toBeNull();
    s.store.setInteraction({ over: true });
    expect(finalResult(s.state)).toMatchObject({
      ok: false,
      lines: expect.arrayContaining(['Fix: Read the verify log.']),
    });
  });
});
