import type { AgentRunner } from '../agents/agent-run.js';
import type { UsageLimit } from '../agents/claude-code/usage-limit.js';
import { MAX_LIMIT_WAITS, waitForReset } from '../agents/limit-wait.js';
import { supervisedRunner } from '../agents/supervised-runner.js';
import type { EngineBus } from '../events.js';
import type { RelaisConfig } from '../protocol/config.js';
import { breakerFrom, reportBreakerOnBus } from '../supervise/breaker-settings.js';
import type { CircuitBreaker } from '../supervise/circuit-breaker.js';
import type { Clock } from '../supervise/clock.js';
import { toolCpuTicks } from '../supervise/process-tree.js';
import type { CycleRunners } from './context.js';

/**
 * `relais cycle`'s agents under the circuit breaker (docs/ARCHITECTURE.md: it supervises every agent process
 * in every engine): each agent run gets its own breaker from the `circuit_breaker` config, as seed
 * 002 §6.1 draws it around one agent run; OPEN kills the run, which the cycle records as failed.
 * Inside `ralphy start` the phase's breaker is used instead (implement-cycle.ts).
 *
 * A usage or rate limit is waited out here (issue 15): the countdown event, then the same call
 * again, up to MAX_LIMIT_WAITS times; the cycle never sees the limit as the agent's failure.
 */
/**
 * Silence while a tool call runs and the agent's process tree is busy (a long test run) is not
 * inactivity (issue 15): CPU time spent by its child processes since the last look is progress.
 */
function toolsAtWork(breaker: CircuitBreaker | null): (pgid: number | null) => Promise<void> {
  let last: { pgid: number; ticks: number } | null = null;
  return async (pgid) => {
    if (pgid === null) return;
    const ticks = toolCpuTicks(pgid);
    if (last?.pgid === pgid && ticks > last.ticks) breaker?.onProgress();
    last = { pgid, ticks };
  };
}

export function supervisedCycleRunners(
  runners: CycleRunners,
  config: RelaisConfig,
  bus: EngineBus,
  clock: Clock,
): CycleRunners {
  const wrap = (inner: AgentRunner): AgentRunner => ({
    async run(request, runBus) {
      for (let waits = 0; ; waits++) {
        const breaker = breakerFrom(config, 'CYCLE', () => clock.now());
        let limit: UsageLimit | null = null;
        const outcome = await supervisedRunner(inner, {
          breaker,
          clock,
          onBreaker: reportBreakerOnBus(bus, breaker),
          watch: toolsAtWork(breaker),
          onLimit: (found) => {
            limit = found;
          },
        }).run(request, runBus);
        const found = limit as UsageLimit | null;
        if (!found || waits >= MAX_LIMIT_WAITS || request.signal.aborted) return outcome;
        await waitForReset({ limit: found, bus, clock, breaker: null, signal: request.signal });
        if (request.signal.aborted) return outcome;
      }
    },
  });
  return {
    planner: wrap(runners.planner),
    implementer: wrap(runners.implementer),
    verifier: wrap(runners.verifier),
  };
}
