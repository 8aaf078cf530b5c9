import type { AgentOutcome, AgentRunner } from '../agents/agent-run.js';
import type { TickResult } from '../tick/run-tick.js';
import type { WorkflowContext } from './context.js';

/**
 * The spend caps of the `ticks` engine, checked before every agent call of a tick (issue 18), not
 * only before the tick: a tick is an orchestrator call (plus its retries) and a builder call, and
 * the phase's `max_calls` or `max_cost_usd` (or the workflow's cap) may be reached in between.
 * Each call is counted as soon as it ends, so the next check sees it; a call the caps refuse never
 * starts, costs nothing and counts as no call. After the tick, what the tick itself booked (a
 * killed call at its reserved maximum, say) is reconciled with what was counted here.
 */
export interface CallBudget {
  /** Wraps a tick's agent runner (outside its supervision: a refused call never runs). */
  readonly wrap: (inner: AgentRunner) => AgentRunner;
  /** The reason a call was refused in this tick, or null. */
  readonly refused: () => NonNullable<ReturnType<WorkflowContext['overBudget']>> | null;
  /** Books the tick's spend the calls themselves did not report. */
  readonly settle: (tick: TickResult) => Promise<void>;
}

/** `lane`: the parallel lane whose spend this is (issue 19), null in the main tree. */
export function callBudget(ctx: WorkflowContext, lane: string | null = null): CallBudget {
  let refused: ReturnType<WorkflowContext['overBudget']> = null;
  let refusals = 0;
  const counted = { calls: 0, costUsd: 0 };
  return {
    refused: () => refused,
    wrap: (inner) => ({
      async run(request, bus) {
        const over = ctx.overBudget();
        if (over) {
          refused ??= over;
          refusals++;
          return notStarted(`not started: ${over.detail}`);
        }
        const outcome = await inner.run(request, bus);
        counted.calls++;
        counted.costUsd += outcome.costUsd;
        await ctx.addCost(outcome.costUsd, 1, lane);
        return outcome;
      },
    }),
    settle: async (tick) => {
      const calls = tick.spent.calls - counted.calls - refusals;
      const costUsd = tick.spent.costUsd - counted.costUsd;
      // A killed call reported nothing (counted at 0 above); the tick holds its maximum, marked
      // as held, not spent, so the header and `ralphy status` can tell the two apart.
      const unreported = { usd: tick.spent.unreportedUsd, calls: tick.spent.unreportedCalls };
      if (calls > 0 || costUsd > 1e-9 || unreported.calls > 0)
        await ctx.addCost(Math.max(0, costUsd), Math.max(0, calls), lane, unreported);
    },
  };
}

/** A call the caps refused: no process, no cost (reported as 0, so no reserved maximum stands). */
function notStarted(failure: string): AgentOutcome {
  return {
    text: null,
    failure,
    costUsd: 0,
    costReported: true,
    errorText: null,
    apiErrorStatus: null,
    permissionDenials: [],
    numTurns: 0,
    process: {
      exitCode: null,
      signal: null,
      spawnError: null,
      timedOut: false,
      aborted: false,
      stdoutTail: '',
      stderrTail: '',
      stdoutBytes: 0,
      stderrBytes: 0,
      durationMs: 0,
    },
  };
}
