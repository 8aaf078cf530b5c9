import type { EngineBus } from '../events.js';
import type { RelaisConfig } from '../protocol/config.js';
import { type BreakerEvent, breakerLogLines, CircuitBreaker } from './circuit-breaker.js';

/** Where a breaker watches: a workflow phase, or a standalone `relais cycle`. */
export type BreakerPlace = 'SPECIFICATION' | 'PLANNING' | 'IMPLEMENTATION' | 'QA' | 'PR' | 'CYCLE';

/**
 * A circuit breaker (seed 002 §6.1) from the `circuit_breaker` config, or null when it is turned
 * off. Special case 2: git and gh in the PR phase may be slow and quiet. Stagnation (no task
 * reaching `completed`) is watched where tasks are completed: the implementation phase.
 */
export function breakerFrom(
  config: RelaisConfig,
  place: BreakerPlace,
  now: () => number,
): CircuitBreaker | null {
  const cb = config.circuit_breaker;
  if (!cb.enabled) return null;
  const inactivity = place === 'PR' ? cb.pr_inactivity_timeout : cb.inactivity_timeout;
  return new CircuitBreaker(
    {
      inactivityMs: inactivity * 1000,
      maxRepeatedErrors: cb.max_repeated_errors,
      stagnationMs: place === 'IMPLEMENTATION' ? cb.task_stagnation_timeout * 1000 : null,
      maxOutputBytes: cb.max_output_size,
      maxAttempts: cb.max_attempts,
      testCommand: config.workflow.stack.test_command,
      testInactivityMs: cb.test_inactivity_timeout * 1000,
    },
    now,
  );
}

/** A breaker warning or OPEN on the bus, with the seed's log lines (every engine reports this way). */
export function reportBreakerOnBus(
  bus: EngineBus,
  breaker: CircuitBreaker | null,
): (event: BreakerEvent) => void {
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
