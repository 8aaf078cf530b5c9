import type { AgentRunner } from '../agents/agent-run.js';
import { supervisedRunner } from '../agents/supervised-runner.js';
import type { EngineBus } from '../events.js';
import type { RelaisConfig } from '../protocol/config.js';
import { breakerFrom, reportBreakerOnBus } from '../supervise/breaker-settings.js';
import type { Clock } from '../supervise/clock.js';
import type { CycleRunners } from './context.js';

/**
 * `relais cycle`'s agents under the circuit breaker (docs/ARCHITECTURE.md: it supervises every agent process
 * in every engine): each agent run gets its own breaker from the `circuit_breaker` config, as seed
 * 002 §6.1 draws it around one agent run; OPEN kills the run, which the cycle records as failed.
 * Inside `ralphy start` the phase's breaker is used instead (implement-cycle.ts).
 */
export function supervisedCycleRunners(
  runners: CycleRunners,
  config: RelaisConfig,
  bus: EngineBus,
  clock: Clock,
): CycleRunners {
  const wrap = (inner: AgentRunner): AgentRunner => ({
    run(request, runBus) {
      const breaker = breakerFrom(config, 'CYCLE', () => clock.now());
      return supervisedRunner(inner, {
        breaker,
        clock,
        onBreaker: reportBreakerOnBus(bus, breaker),
      }).run(request, runBus);
    },
  });
  return {
    planner: wrap(runners.planner),
    implementer: wrap(runners.implementer),
    verifier: wrap(runners.verifier),
  };
}
