import type { EngineBus } from '../events.js';
import type { RelaisConfig } from '../protocol/config.js';
import { type BreakerEvent, breakerLogLines, CircuitBreaker } from './circuit-breaker.js';

/** Where a breaker watches: a workflow phase, or a standalone `relais cycle`. */
export type BreakerPlace = 'SPECIFICATION' | 'PLANNING' | 'IMPLEMENTATION' | 'QA' | 'PR' | 'CYCLE';

/**
 * A circuit breaker (seed 002 §6.1) from the `circuit_breaker` config, or null when it is turned
 * off. Special cases: git and gh in the PR phase may be slow and quiet; the project's test command
 * (`workflow.stack.test_command`, else the one its verification templates run) may be quiet for
 * long. Stagnation (no task reaching `completed`) is watched where tasks are completed: the
 * implementation phase.
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
      testCommand: testCommandOf(config),
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

/**
 * The project's test command as it shows in an agent's output: `workflow.stack.test_command` when
 * set, else the command line of the verification template with id `test` (then one whose id names
 * tests), up to its first `{{placeholder}}`. Null when there is none: without it
 * the longer inactivity threshold of seed §6.1's "long tests" case could never apply.
 */
export function testCommandOf(config: RelaisConfig): string | null {
  const own = config.workflow.stack.test_command?.trim();
  if (own) return own;
  const templates = config.verification.templates;
  // Never another template: a lint command named as "the tests" would mislead the agents' prompts.
  const template = templates.find((t) => t.id === 'test') ?? templates.find((t) => /test/i.test(t.id));
  if (!template) return null;
  const fixed = template.args.slice(0, firstPlaceholder(template.args));
  return [template.cmd, ...fixed].join(' ');
}

function firstPlaceholder(args: readonly string[]): number {
  const at = args.findIndex((a) => /\{\{[A-Za-z0-9_]+\}\}/.test(a));
  return at < 0 ? args.length : at;
}
