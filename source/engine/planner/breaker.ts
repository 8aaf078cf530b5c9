import type { EngineBus } from '../events.js';
import type { RelaisConfig } from '../protocol/config.js';
import { type BreakerEvent, breakerLogLines, CircuitBreaker } from '../supervise/circuit-breaker.js';
import type { Clock } from '../supervise/clock.js';

/**
 * The circuit breaker for a planner run outside a workflow (`relais plan`): seed 002 §6.1's
 * triggers from the same config section, as every agent process in every engine has.
 */
export function plannerBreaker(config: RelaisConfig, clock: Clock): CircuitBreaker | null {
  const cb = config.circuit_breaker;
  if (!cb.enabled) return null;
  return new CircuitBreaker(
    {
      inactivityMs: cb.inactivity_timeout * 1000,
      maxRepeatedErrors: cb.max_repeated_errors,
      stagnationMs: null,
      maxOutputBytes: cb.max_output_size,
      maxAttempts: cb.max_attempts,
      testCommand: null,
      testInactivityMs: cb.test_inactivity_timeout * 1000,
    },
    () => clock.now(),
  );
}

/** Breaker warnings on the bus, with the seed's log lines (there is no WORKFLOW.json to keep them). */
export function reportOnBus(bus: EngineBus, breaker: CircuitBreaker | null): (event: BreakerEvent) => void {
  return (event) => {
    if (!breaker) return;
    bus.emit({
      type: 'breaker.changed',
      breaker: breaker.snapshot(),
      trigger: event.trigger,
      detail: event.detail,
      log: breakerLogLines(event),
    });
  };
}
