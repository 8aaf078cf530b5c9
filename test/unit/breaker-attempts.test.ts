import { describe, expect, it } from 'vitest';
import type { AgentOutcome, AgentRequest, AgentRunner } from '../../source/engine/agents/agent-run.js';
import { type Supervision, supervisedRunner } from '../../source/engine/agents/supervised-runner.js';
import { EngineBus } from '../../source/engine/events.js';
import { type BreakerEvent, CircuitBreaker } from '../../source/engine/supervise/circuit-breaker.js';
import { endedProcess, TEST_BREAKER } from '../support/agent-fakes.js';
import { FakeClock } from '../support/fake-clock.js';

// Seed 002 §6.1: attempt += 1 on each trigger, OPEN at max_attempts. Attempts add up across the
// runs of a phase while nothing shows progress (a run that merely answers does not wipe them);
// evidence of progress closes a half-open breaker. A fake clock and in-process agents: no sleeps.

const BREAKER = TEST_BREAKER;

const PROCESS = endedProcess();

function answered(text: string): AgentOutcome {
  return {
    text,
    failure: null,
    costUsd: 0,
    costReported: true,
    errorText: null,
    apiErrorStatus: null,
    permissionDenials: [],
    numTurns: 1,
    process: PROCESS,
  };
}

/**
 * An agent that, in each run, does what the test says while "running" (advance the fake clock,
 * change the tree) and then answers normally, unless the breaker killed it meanwhile.
 */
function scriptedAgent(during: Array<(request: AgentRequest) => void>): AgentRunner {
  let run = 0;
  return {
    async run(request) {
      const step = during[run++];
      step?.(request);
      if (request.signal.aborted)
        return { ...answered(''), text: null, failure: 'killed', process: { ...PROCESS, aborted: true } };
      return answered('Done.\nEXIT_SIGNAL: true');
    },
  };
}

function supervise(withWatcher: boolean) {
  const clock = new FakeClock();
  const breaker = new CircuitBreaker(BREAKER, () => clock.now());
  const events: BreakerEvent[] = [];
  // The evidence watcher's contract: a baseline when a run starts, then comparisons.
  let tree = 0;
  let seen = 0;
  const watch: Supervision['watch'] = async (_pgid, options) => {
    if (!options?.baseline && tree !== seen) breaker.onProgress();
    seen = tree;
  };
  const supervision: Supervision = {
    breaker,
    clock,
    onBreaker: (event) => events.push(event),
    watch: withWatcher ? watch : undefined,
  };
  return { clock, breaker, events, supervision, changeTree: () => tree++ };
}

const request = (signal: AbortSignal): AgentRequest => ({
  role: 'dev',
  attempt: 1,
  systemPrompt: '',
  userPrompt: '',
  model: 'fake',
  fallbackModel: null,
  maxTurns: 1,
  maxBudgetUsd: 1,
  tools: [],
  permissionMode: 'bypassPermissions',
  streaming: true,
  cwd: '/',
  timeoutMs: 1000,
  signal,
});

describe('breaker attempts across runs', () => {
  it('a run that merely answers keeps its warnings: the third silent run without progress is OPEN', async () => {
    const { clock, breaker, events, supervision } = supervise(true);
    const silent = () => clock.advance(60_000);
    const runner = supervisedRunner(scriptedAgent([silent, silent, silent]), supervision);
    const bus = new EngineBus();
    const signal = new AbortController().signal;

    expect((await runner.run(request(signal), bus)).failure).toBeNull();
    expect(breaker.snapshot()).toMatchObject({ state: 'half_open', attempts: 1 });
    expect((await runner.run(request(signal), bus)).failure).toBeNull();
    expect(breaker.snapshot()).toMatchObject({ state: 'half_open', attempts: 2 });
    const third = await runner.run(request(signal), bus);
    expect(third.failure).toBe('killed');
    expect(breaker.isOpen).toBe(true);
    expect(events.map((e) => `${e.kind} ${e.attempts}/${e.maxAttempts}`)).toEqual([
      'warning 1/3',
      'warning 2/3',
      'open 3/3',
    ]);
  });

  it('progress in a run (even a short one the timer never looked at) closes the breaker: the count starts again', async () => {
    const { clock, breaker, events, supervision, changeTree } = supervise(true);
    const silent = () => clock.advance(60_000);
    const runner = supervisedRunner(
      scriptedAgent([silent, silent, () => changeTree(), silent, silent]),
      supervision,
    );
    const bus = new EngineBus();
    const signal = new AbortController().signal;
    for (let i = 0; i < 5; i++) await runner.run(request(signal), bus);
    expect(breaker.isOpen).toBe(false);
    expect(breaker.snapshot()).toMatchObject({ state: 'half_open', attempts: 2 });
    expect(events.map((e) => e.attempts)).toEqual([1, 2, 1, 2]);
  });

  it('the runner changing the tree between runs (a commit, a rollback) is not the agent’s progress', async () => {
    const { clock, breaker, supervision, changeTree } = supervise(true);
    const silent = () => clock.advance(60_000);
    const runner = supervisedRunner(scriptedAgent([silent, silent]), supervision);
    const bus = new EngineBus();
    const signal = new AbortController().signal;
    await runner.run(request(signal), bus);
    changeTree(); // the runner commits the judged work before the next run
    await runner.run(request(signal), bus);
    expect(breaker.snapshot()).toMatchObject({ state: 'half_open', attempts: 2 });
  });

  it('where nothing watches for evidence (the planner), a normal answer closes the breaker as before', async () => {
    const { clock, breaker, events, supervision } = supervise(false);
    const silent = () => clock.advance(60_000);
    const runner = supervisedRunner(scriptedAgent([silent, silent, silent]), supervision);
    const bus = new EngineBus();
    const signal = new AbortController().signal;
    for (let i = 0; i < 3; i++) await runner.run(request(signal), bus);
    expect(breaker.snapshot()).toMatchObject({ state: 'closed', attempts: 0 });
    expect(events.map((e) => e.attempts)).toEqual([1, 1, 1]);
  });
});

describe('what closes a half-open breaker', () => {
  const make = () => {
    const clock = new FakeClock();
    const breaker = new CircuitBreaker({ ...BREAKER, inactivityMs: 10_000_000, stagnationMs: 600_000 }, () =>
      clock.now(),
    );
    return { clock, breaker };
  };

  it('output and liveness do not; evidence of progress does', () => {
    const { clock, breaker } = make();
    clock.advance(600_000);
    expect(breaker.check()).toMatchObject({ trigger: 'stagnation', attempts: 1 });
    breaker.onOutput('still thinking');
    breaker.onAlive();
    breaker.onBytes(100);
    expect(breaker.snapshot()).toMatchObject({ state: 'half_open', attempts: 1 });
  });

  it('after a stagnation warning only a completed task does: files changing is exactly what stagnates', () => {
    const { clock, breaker } = make();
    clock.advance(600_000);
    expect(breaker.check()).toMatchObject({ trigger: 'stagnation', attempts: 1 });
    breaker.onProgress();
    expect(breaker.snapshot()).toMatchObject({ state: 'half_open', attempts: 1 });
    clock.advance(600_000);
    expect(breaker.check()).toMatchObject({ trigger: 'stagnation', attempts: 2 });
    breaker.onTaskCompleted();
    expect(breaker.snapshot()).toMatchObject({ state: 'closed', attempts: 0 });
    // With the stagnation answered, other progress closes the next warning again.
    breaker.onBytes(2 << 20);
    expect(breaker.snapshot()).toMatchObject({ state: 'half_open', attempts: 1 });
    breaker.onProgress();
    expect(breaker.snapshot()).toMatchObject({ state: 'closed', attempts: 0 });
  });
});
