import type { BuildTask } from '../protocol/task.js';
import type { FailedPlan } from '../protocol/workflow.js';
import { type PlanSignature, planFingerprint, planSignature, samePlan } from '../session/plan-fingerprint.js';

/**
 * The plans that already failed for one task of the `ticks` engine (issue 15): after a stopped
 * tick the orchestrator is asked to re-plan, and the same plan (the same signature, reworded or
 * not) proposed again is refused before anything is built, so no task gets a second attempt with
 * the same plan; the workflow then escalates to the human. The failed plans live in the task's
 * record in WORKFLOW.json (`failed_plans`), so a resumed workflow still knows them.
 */
export class PlanMemory {
  private readonly failed: FailedPlan[];
  private last: { signature: PlanSignature; intent: string } | null = null;

  constructor(
    failed: readonly FailedPlan[] = [],
    private readonly persist: (failed: FailedPlan[]) => Promise<void> = async () => undefined,
  ) {
    this.failed = [...failed];
  }

  /** For TickOptions.refusePlan: remembers the plan, refuses one that already failed. */
  readonly refuse = (task: BuildTask): string | null => {
    if (task.task_kind !== 'execute') {
      this.last = null;
      return null;
    }
    const signature = planSignature(task);
    this.last = { signature, intent: task.intent };
    const before = this.failed.find((plan) => samePlan(plan, signature));
    return before
      ? `the orchestrator proposed again the plan that already failed with ${before.code} (task fingerprint ${before.fingerprint}): "${oneLine(task.intent)}"`
      : null;
  };

  /** The last plan was stopped with `code`: it may not be tried again (kept in WORKFLOW.json). */
  async recordStop(code: string): Promise<void> {
    if (!this.last) return;
    const { signature, intent } = this.last;
    if (this.failed.some((plan) => samePlan(plan, signature))) return;
    this.failed.push({
      fingerprint: planFingerprint(signature),
      code,
      intent: oneLine(intent),
      kind: signature.kind,
      scope: [...signature.scope],
      verification: [...signature.verification],
      words: [...signature.words].slice(0, 400),
    });
    // The oldest give way first: the record holds the last 20.
    await this.persist(this.failed.slice(-20));
  }

  /** What the next orchestrator prompt says about the failed plans. */
  replanNote(): string {
    if (this.failed.length === 0) return '';
    const plans = this.failed.map((p) => `"${oneLine(p.intent)}" (${p.code})`);
    return ` Re-plan: propose a different approach; the runner refuses these failed plans if proposed again, however they are worded: ${plans.join('; ')}.`;
  }
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 200);
}
