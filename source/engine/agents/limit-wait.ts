import type { EngineBus } from '../events.js';
import type { CircuitBreaker } from '../supervise/circuit-breaker.js';
import type { Clock } from '../supervise/clock.js';
import type { UsageLimit } from './claude-code/usage-limit.js';

/** At most this many limit waits in one step: a limit that never lifts is a failure after all. */
export const MAX_LIMIT_WAITS = 12;

/**
 * A usage or rate limit is no failure and no stagnation (issue 4): the breaker is paused, the
 * front ends show a countdown to `until`, and the caller runs the same step again afterwards.
 */
export async function waitForReset(input: {
  readonly limit: UsageLimit;
  readonly bus: EngineBus;
  readonly clock: Clock;
  readonly breaker: CircuitBreaker | null;
  readonly signal: AbortSignal;
  readonly onWaiting?: (until: Date | null) => Promise<void>;
}): Promise<void> {
  const { limit, bus, clock, breaker, signal } = input;
  bus.emit({ type: 'workflow.waiting', until: limit.resetAt.toISOString(), reason: limit.message });
  breaker?.pause();
  await input.onWaiting?.(limit.resetAt);
  await clock.sleep(Math.max(0, limit.resetAt.getTime() - clock.now()), signal);
  breaker?.resume();
  await input.onWaiting?.(null);
}
