import type { CircuitBreaker } from '../supervise/circuit-breaker.js';
import type { PhaseResult, WorkflowContext } from './context.js';
import { type PhaseSignal, stopped, timeoutFailure } from './phase-helpers.js';

/**
 * Why a phase's work was cut short, in the order that explains it best: the breaker opened (it
 * killed the agent), the phase timed out, or the run was interrupted or aborted. Null when nothing
 * cut it short.
 */
export function interruptionOf(
  ctx: WorkflowContext,
  breaker: CircuitBreaker | null,
  phase: PhaseSignal,
): PhaseResult | null {
  if (breaker?.isOpen)
    return {
      kind: 'fail',
      reason: 'circuit_breaker_triggered',
      detail: breaker.snapshot().last_trigger ?? 'open',
    };
  if (phase.timedOut()) return timeoutFailure(ctx);
  if (ctx.options.signal.aborted) return stopped(ctx);
  return null;
}

/**
 * The pause key: the tick that ran is recorded; no next one starts (a resume goes on with the
 * task). Each parallel lane checks it before its own next tick too, so every lane ends the tick
 * it is in (landing it when it verified the task) and takes no new one (engine/parallel/).
 */
export function pauseRequested(ctx: WorkflowContext): boolean {
  return ctx.options.pauseRequested?.() ?? false;
}
