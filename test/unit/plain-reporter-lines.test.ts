import { describe, expect, it } from 'vitest';
import { plainReporter } from '../../source/cli/front-end/plain-reporter.js';
import type { EngineEvent, StampedEvent } from '../../source/engine/events.js';
import { FakeClock } from '../support/fake-clock.js';

// The plain front end's lines (seed 002 §9): every line stamped, a gate nobody answered said as
// such, and a usage-limit wait counting down on the injected clock.

function reporter(clock = new FakeClock()) {
  let out = '';
  const report = plainReporter(
    { cwd: '/', env: {}, stdout: { write: (t: string) => (out += t) }, stderr: { write: () => true } },
    clock,
  );
  const emit = (event: EngineEvent) =>
    report({ ...event, at: new Date(clock.now()).toISOString() } as StampedEvent);
  return { emit, clock, lines: () => out.split('\n').filter(Boolean) };
}

const STAMP = /^\[\d{2}:\d{2}:\d{2}\]/;

describe('plain lines', () => {
  it('stamps every line of a multi-line event, the empty ones too', () => {
    const { emit, lines } = reporter();
    emit({
      type: 'gate.requested',
      gate: 'spec',
      title: 'Approve?',
      lines: ['Files generated:', '  - specs/SPEC.md', ''],
      answer: 'yes_no',
    });
    expect(lines()).toHaveLength(4);
    for (const line of lines()) expect(line).toMatch(STAMP);
    expect(lines()[2]).toMatch(/^\[\d{2}:\d{2}:\d{2}\] {5}- specs\/SPEC\.md$/);
  });

  it('a yes/no gate nobody could answer waits; it is never shown as a reject', () => {
    const { emit, lines } = reporter();
    emit({ type: 'gate.resolved', gate: 'spec', decision: 'reject', by: 'nobody', answer: null });
    emit({ type: 'gate.resolved', gate: 'qa', decision: 'reject', by: 'nobody', answer: null });
    emit({ type: 'gate.resolved', gate: 'input', decision: 'reject', by: 'nobody', answer: null });
    emit({ type: 'gate.resolved', gate: 'qa', decision: 'reject', by: 'human', answer: null });
    expect(lines().map((l) => l.replace(STAMP, ''))).toEqual([
      ' Gate spec: nobody could answer: the gate waits',
      ' Gate qa: nobody could answer: the gate waits',
      ' Gate input: nobody could answer',
      ' Gate qa: rejected',
    ]);
  });

  it("a pause or Ctrl-C ends stopped and resumable; a declined planner's Fix fits someone at the terminal", () => {
    const { emit, lines } = reporter();
    emit({
      type: 'run.finished',
      state: 'IMPLEMENTATION',
      status: 'interrupted',
      reason: null,
      detail: null,
      pr_url: null,
      next_steps: ['ralphy start /repo'],
    });
    emit({
      type: 'run.finished',
      state: 'FAILED',
      status: 'failed',
      reason: 'needs_input',
      detail: 'you declined to answer the planner and to proceed; ralphy start resumes planning',
      pr_url: null,
      next_steps: [],
    });
    const said = lines().map((l) => l.replace(STAMP, ''));
    expect(said[0]).toBe(' Workflow stopped at IMPLEMENTATION (interrupted, resumable: ralphy start)');
    expect(said[1]).toBe('   Next: ralphy start /repo');
    const fix = said.find((l) => l.startsWith('   Fix:')) ?? '';
    expect(fix).toContain('you declined it and chose to stop there');
    expect(fix).not.toContain('nobody answered');
  });

  it('issue 16 wording: a code said once, "Step:" for a tick and "Phase:" for the workflow', () => {
    const { emit, lines } = reporter();
    emit({ type: 'phase.changed', phase: 'BUILD' });
    emit({ type: 'workflow.changed', state: 'QA', status: 'running', reason: null, detail: null });
    emit({
      type: 'tick.finished',
      run_id: 'r1',
      verdict: 'success',
      code: 'SUCCESS',
      remediation: 'Nothing to fix.',
      detail: null,
      blast_radius_line: '1 file, +1/-0, 0 new',
      commit: null,
      report_path: null,
    });
    emit({
      type: 'loop.tick',
      tick: 2,
      run_id: 'r2',
      verdict: 'stop',
      code: 'STOP_DIFF_TOO_LARGE',
      task_id: 'T2',
      milestone: null,
      blast_radius_line: '3 files, +90/-0, 0 new',
      cost_usd: 0,
      commit: null,
      control: null,
    });
    expect(lines().map((l) => l.replace(STAMP, ''))).toEqual([
      ' Step: BUILD',
      ' Phase: QA',
      ' Result: SUCCESS (1 file, +1/-0, 0 new)',
      ' Tick 2: STOP_DIFF_TOO_LARGE T2 (3 files, +90/-0, 0 new) $0.0000',
    ]);
  });

  it("the planner's questions left unanswered are never a rejected plan; --yes says it decided", () => {
    const { emit, lines } = reporter();
    const ask = (answer: 'text' | 'yes_no') =>
      emit({ type: 'gate.requested', gate: 'plan', title: 'Planner', lines: [], answer });
    ask('text');
    emit({ type: 'gate.resolved', gate: 'plan', decision: 'reject', by: 'nobody', answer: null });
    ask('yes_no');
    emit({ type: 'gate.resolved', gate: 'plan', decision: 'approve', by: 'auto', answer: null });
    ask('text'); // Esc at the question: skipped, then the proceed question
    emit({ type: 'gate.resolved', gate: 'plan', decision: 'reject', by: 'human', answer: null });
    ask('yes_no');
    emit({ type: 'gate.resolved', gate: 'plan', decision: 'reject', by: 'human', answer: null });
    ask('text');
    emit({ type: 'gate.resolved', gate: 'plan', decision: 'answer', by: 'human', answer: 'keep accents' });
    const resolved = lines()
      .map((l) => l.replace(STAMP, ''))
      .filter((l) => l.startsWith(' Gate'));
    expect(resolved).toEqual([
      " Gate plan: the planner's questions are not answered (nobody at a terminal; --yes answers yes/no gates only)",
      ' Gate plan: approved automatically (--yes)',
      " Gate plan: the planner's questions are not answered (skipped)",
      ' Gate plan: declined: planning stops here',
      ' Gate plan: answered',
    ]);
    for (const line of resolved) expect(line).not.toMatch(/\breject(ed)?\b/);
  });

  it('issue 4: a killed builder call is said as held, not spent, per tick, per loop and per phase', () => {
    const { emit, lines } = reporter();
    emit({
      type: 'loop.tick',
      tick: 1,
      run_id: 'r1',
      verdict: 'stop',
      code: 'STOP_INTERRUPTED',
      task_id: 'T1',
      milestone: 'M1',
      blast_radius_line: '0 files, +0/-0, 0 new',
      cost_usd: 1.51,
      held_usd: 1.5,
      held_calls: 1,
      commit: null,
      control: null,
    });
    emit({
      type: 'loop.finished',
      mode: 'milestone',
      ticks: 1,
      verdicts: { STOP_INTERRUPTED: 1 },
      cost_usd: 1.51,
      held_usd: 1.5,
      held_calls: 1,
      calls: 2,
      reason: 'interrupted during a tick',
      exit: 'interrupted',
    });
    emit({
      type: 'workflow.spend',
      phase: 'IMPLEMENTATION',
      cost_usd: 3.01,
      calls: 4,
      unreported_usd: 3,
      unreported_calls: 2,
      max_cost_usd: 5,
      max_calls: null,
      total_cost_usd: 3.01,
    });
    const text = lines().join('\n');
    expect(text).toContain('(0 files, +0/-0, 0 new) $0.0100 spent + $1.50 held for 1 call of unknown cost');
    expect(text).toContain('2 agent call(s), $0.0100 spent + $1.50 held for 1 call of unknown cost;');
    expect(text).toContain(
      'Spend: IMPLEMENTATION $0.0100 spent + $3.00 held for 2 calls of unknown cost, 4 agent calls, cap $5.00',
    );
    expect(text).not.toMatch(/\$1\.51|\$3\.01/);
  });

  it('a usage-limit wait counts down every whole minute and at 10 s, on the injected clock', () => {
    const { emit, clock, lines } = reporter(new FakeClock(Date.parse('2026-11-22T10:00:00Z')));
    emit({ type: 'workflow.waiting', until: '2026-11-22T10:02:30.000Z', reason: 'usage limit' });
    expect(lines()).toHaveLength(1);
    clock.advance(29_000);
    expect(lines()).toHaveLength(1);
    clock.advance(1_000); // 2m00s left
    clock.advance(60_000); // 1m00s left
    clock.advance(50_000); // 10s left
    clock.advance(60_000); // past the reset: nothing more
    const countdown = lines().slice(1);
    expect(countdown.map((l) => l.replace(/^\[[^\]]*\] /, ''))).toEqual([
      expect.stringMatching(/^Waiting for the usage limit: 2m00s left \(resets at \d{2}:\d{2}:\d{2}\)$/),
      expect.stringMatching(/^Waiting for the usage limit: 1m00s left/),
      expect.stringMatching(/^Waiting for the usage limit: 10s left/),
    ]);
    // Stamped with the injected clock's time, not the wall clock's.
    const at = (ms: number) => {
      const d = new Date(ms);
      return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
    };
    expect(countdown[0]).toContain(`[${at(Date.parse('2026-11-22T10:00:30Z'))}]`);
  });

  it('the countdown stops as soon as the run goes on', () => {
    const { emit, clock, lines } = reporter();
    emit({ type: 'workflow.waiting', until: new Date(clock.now() + 600_000).toISOString(), reason: 'limit' });
    clock.advance(60_000);
    expect(lines()).toHaveLength(2);
    emit({ type: 'agent.started', role: 'spec', attempt: 1, command: 'claude', model: 'opus' });
    clock.advance(600_000);
    expect(lines()).toHaveLength(3);
    expect(lines()[2]).toContain('Agent: spec-agent started');
  });
});

describe('the judge line with the sandbox off (defect 14)', () => {
  const judged = (sandbox: 'off' | 'bwrap'): EngineEvent =>
    ({
      type: 'judge.finished',
      code: null,
      blast_radius: { files: 0, added: 0, removed: 0, new_files: 0 },
      blast_radius_line: '0 files, +0/-0, 0 new',
      sandbox,
      violations: [],
      touched_paths: [],
    }) as unknown as EngineEvent;

  it('says scope ok only for the repository, whose tree is all the judge sees', () => {
    const off = reporter();
    off.emit(judged('off'));
    expect(off.lines().join('\n')).toContain(
      'Judge: 0 files, +0/-0, 0 new, scope ok inside the repository (sandbox off: writes outside it are not seen)',
    );
    const on = reporter();
    on.emit(judged('bwrap'));
    expect(on.lines().join('\n')).toMatch(/Judge: 0 files, \+0\/-0, 0 new, scope ok$/);
  });
});
