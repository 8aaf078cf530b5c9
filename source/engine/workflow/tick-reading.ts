import type { UsageLimit } from '../agents/claude-code/usage-limit.js';
import type { TickResult } from '../tick/run-tick.js';

/**
 * How the `ticks` engine reads the end of one tick (issue 15), in the order that decides it: a
 * usage limit is a wait (no tick counted), a question from the builder or the orchestrator goes to
 * the human (no tick counted), then the runner's own verdict: blocked ends the task, a stop is
 * re-planned (a counted tick), a success is checked against evidence before the task completes.
 * The circuit breaker and interrupts are read before this (interruption.ts). Kept apart from
 * implement-ticks.ts so the corpus of recorded endings (test/corpus) replays exactly this.
 */
export type TickReading =
  | { readonly kind: 'limit'; readonly limit: UsageLimit }
  | { readonly kind: 'question'; readonly from: 'builder' | 'orchestrator'; readonly question: string }
  | { readonly kind: 'blocked' }
  | { readonly kind: 'stopped' }
  | { readonly kind: 'succeeded' };

export function readTick(tick: TickResult, limit: UsageLimit | null, mayWaitForLimit: boolean): TickReading {
  if (limit && mayWaitForLimit) return { kind: 'limit', limit };
  if (tick.orchestratorQuestion)
    return { kind: 'question', from: 'orchestrator', question: tick.orchestratorQuestion };
  const question = tick.verdict === 'stop' ? tick.builderQuestion : null;
  if (question) return { kind: 'question', from: 'builder', question };
  if (tick.verdict === 'blocked') return { kind: 'blocked' };
  if (tick.verdict === 'stop') return { kind: 'stopped' };
  return { kind: 'succeeded' };
}
