import { type AgentRunner, prestartThrough } from '../agents/agent-run.js';
import type { UsageLimit } from '../agents/claude-code/usage-limit.js';
import { MAX_LIMIT_WAITS, waitForReset } from '../agents/limit-wait.js';
import { usageLimitOf } from '../agents/supervised-runner.js';
import { type Clock, realClock } from '../supervise/clock.js';
import { runTick, type TickOptions, type TickResult } from './run-tick.js';

/**
 * One tick of `relais run` or `relais loop` that waits out a usage limit (issue 15): a tick
 * whose agent hit a usage or rate limit was stopped by the limit, not by its work, so the runner
 * announces the wait (`workflow.waiting`, the countdown the TUI and plain output show), sleeps
 * until the reset and runs the tick again. Such a tick is no failure of the loop; after
 * MAX_LIMIT_WAITS waits the last result stands. An interrupt during the wait ends it as an
 * interrupted tick: run the command again to resume.
 */
export async function runTickWaitingOutLimits(options: TickOptions): Promise<TickResult> {
  const clock = options.clock ?? realClock;
  const spent = { ticks: 0, calls: 0, costUsd: 0, unreportedUsd: 0, unreportedCalls: 0 };
  for (let waits = 0; ; waits++) {
    let limit: UsageLimit | null = null;
    const result = await runTick({
      ...options,
      endedByLimit: () => limit !== null,
      wrapRunner: (runner) =>
        noticingLimits(options.wrapRunner?.(runner) ?? runner, clock, (found) => {
          limit = found;
        }),
    });
    spent.ticks += result.spent.ticks;
    spent.calls += result.spent.calls;
    spent.costUsd += result.spent.costUsd;
    spent.unreportedUsd += result.spent.unreportedUsd;
    spent.unreportedCalls += result.spent.unreportedCalls;
    const found = limit as UsageLimit | null;
    const total = { ...result, spent: { ...spent } };
    if (!found || result.verdict === 'success' || result.interrupted || waits >= MAX_LIMIT_WAITS)
      return total;
    await waitForReset({ limit: found, bus: options.bus, clock, breaker: null, signal: options.signal });
    if (options.signal.aborted) return { ...total, interrupted: true };
  }
}

/** Tells `onLimit` when a run ended on a usage or rate limit (the outcome itself is unchanged). */
function noticingLimits(inner: AgentRunner, clock: Clock, onLimit: (limit: UsageLimit) => void): AgentRunner {
  return {
    prestart: prestartThrough(() => inner),
    async run(request, bus) {
      const outcome = await inner.run(request, bus);
      const limit = usageLimitOf(outcome, new Date(clock.now()));
      if (limit) onLimit(limit);
      return outcome;
    },
  };
}
