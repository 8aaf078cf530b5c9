import { describe, expect, it } from 'vitest';
import type { AgentOutcome, AgentRequest, AgentRunner } from '../../source/engine/agents/agent-run.js';
import { supervisedCycleRunners } from '../../source/engine/cycle/supervision.js';
import { EngineBus, type StampedEvent } from '../../source/engine/events.js';
import { configSchema } from '../../source/engine/protocol/config.js';
import { endedProcess } from '../support/agent-fakes.js';
import { FakeClock } from '../support/fake-clock.js';

// Issue 15: `relais cycle` waits out a usage limit (countdown event, then the same call again);
// the cycle never sees the limit as its agent's failure.

const answer = (text: string): AgentOutcome => ({
  text,
  failure: null,
  costUsd: 0.01,
  costReported: true,
  errorText: null,
  apiErrorStatus: null,
  permissionDenials: [],
  numTurns: 1,
  process: endedProcess(),
});
const limited: AgentOutcome = {
  ...answer(''),
  text: null,
  failure: "claude reported an error: You've hit your weekly limit · resets Nov 24, 9am (UTC)",
  errorText: "You've hit your weekly limit · resets Nov 24, 9am (UTC)",
  process: endedProcess(1),
};

function scripted(outcomes: AgentOutcome[]): AgentRunner & { calls: number } {
  const runner = {
    calls: 0,
    async run(_request: AgentRequest) {
      runner.calls++;
      return outcomes.shift() ?? answer('no more');
    },
  };
  return runner;
}

const request = (signal: AbortSignal): AgentRequest => ({
  role: 'orchestrator',
  attempt: 1,
  systemPrompt: 's',
  userPrompt: 'u',
  model: 'm',
  fallbackModel: null,
  maxTurns: 1,
  maxBudgetUsd: 1,
  tools: [],
  permissionMode: 'plan',
  streaming: false,
  cwd: '/',
  timeoutMs: 1000,
  signal,
});

function setup(outcomes: AgentOutcome[]) {
  const clock = new FakeClock(Date.parse('2026-11-22T10:00:00Z'));
  const events: StampedEvent[] = [];
  const bus = new EngineBus(() => new Date(clock.now()));
  bus.subscribe((e) => events.push(e));
  const planner = scripted(outcomes);
  const runners = supervisedCycleRunners(
    { planner, implementer: scripted([]), verifier: scripted([]) },
    configSchema.parse({}),
    bus,
    clock,
  );
  return { clock, events, bus, planner, runners };
}

describe('relais cycle and usage limits', () => {
  it('waits until the dated reset, then runs the same call again', async () => {
    const { clock, events, bus, planner, runners } = setup([limited, answer('the plan')]);
    const slept: number[] = [];
    clock.onSleep = (ms) => {
      slept.push(ms);
      setImmediate(() => clock.advance(ms));
    };
    const outcome = await runners.planner.run(request(new AbortController().signal), bus);
    expect(outcome.text).toBe('the plan');
    expect(planner.calls).toBe(2);
    expect(events.find((e) => e.type === 'workflow.waiting')).toMatchObject({
      until: '2026-11-24T09:00:00.000Z',
    });
    expect(slept).toEqual([47 * 60 * 60 * 1000]);
  });

  it('an interrupt during the wait returns the limited outcome, and nothing runs again', async () => {
    const { clock, bus, planner, runners } = setup([limited, answer('never')]);
    const controller = new AbortController();
    clock.onSleep = () => setImmediate(() => controller.abort());
    const outcome = await runners.planner.run(request(controller.signal), bus);
    expect(outcome.failure).toContain('weekly limit');
    expect(planner.calls).toBe(1);
  });
});
