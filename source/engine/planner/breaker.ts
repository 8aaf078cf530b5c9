import type { EngineBus } from '../events.js';
import { type BreakerEvent, breakerLogLines, type CircuitBreaker } from '../supervise/circuit-breaker.js';

/**
 * Breaker warnings on the bus, with the seed's log lines, for a planner run outside a workflow
 * (`relais plan`: there is no WORKFLOW.json to keep them). The breaker itself is the PLANNING
 * phase's, from `breakerFrom(config, 'PLANNING', …)`, as `ralphy start` builds it.
 */
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
