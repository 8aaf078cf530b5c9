import type { BuildTask } from '../protocol/task.js';
import { planFingerprint } from './plan-fingerprint.js';

/**
 * The plans that already failed for one task of the `ticks` engine (issue 15): after a stopped
 * tick the orchestrator is asked to re-plan, and the same plan (same fingerprint) proposed again
 * is refused before anything is built, so no task gets a second attempt with the same plan; the
 * workflow then escalates to the human.
 */
export class PlanMemory {
  private readonly failed = new Map<string, { code: string; intent: string }>();
  private last: { fingerprint: string; intent: string } | null = null;

  /** For TickOptions.refusePlan: remembers the plan, refuses one that already failed. */
  readonly refuse = (task: BuildTask): string | null => {
    if (task.task_kind !== 'execute') return null;
    const fingerprint = planFingerprint(task);
    this.last = { fingerprint, intent: task.intent };
    const before = this.failed.get(fingerprint);
    return before
      ? `the orchestrator proposed again the plan that already failed with ${before.code} (task fingerprint ${fingerprint}): "${oneLine(task.intent)}"`
      : null;
  };

  /** The last plan was stopped with `code`: it may not be tried again. */
  recordStop(code: string): void {
    if (this.last) this.failed.set(this.last.fingerprint, { code, intent: this.last.intent });
  }

  /** What the next orchestrator prompt says about the failed plans. */
  replanNote(): string {
    if (this.failed.size === 0) return '';
    const plans = [...this.failed.values()].map((p) => `"${oneLine(p.intent)}" (${p.code})`);
    return ` Re-plan: propose a different approach; the runner refuses these failed plans if proposed again: ${plans.join('; ')}.`;
  }
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 200);
}
