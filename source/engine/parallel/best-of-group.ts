import type { AttemptRecord } from '../protocol/workflow.js';
import { type Choice, chooseAttempt } from './best-of-choice.js';

/**
 * Best of N (issue 19): the K attempts at one task meet here. An attempt whose tick the runner
 * verified (in scope) submits itself and waits; an attempt that ends any other way says so. Once
 * every attempt has done one or the other, the runner chooses (best-of-choice.ts), records why
 * (`onDecided`), and only then tells each waiting attempt whether it goes to the merge queue or
 * is discarded. Nothing lands before every attempt is in: the choice is among all of them.
 */

export type Verdict = 'won' | 'lost' | 'aborted';

export class BestOfGroup {
  private readonly records = new Map<number, AttemptRecord>();
  private readonly waiting = new Map<number, (verdict: Verdict) => void>();
  private choice: Choice | null = null;
  private winnerSlot: number | null = null;

  constructor(
    /** How many attempts (K). */
    readonly of: number,
    private readonly onDecided: (choice: Choice, records: AttemptRecord[]) => Promise<void>,
  ) {}

  /** The choice, once made. */
  get decided(): Choice | null {
    return this.choice;
  }

  /** The chosen attempt (1 to K), once chosen; null before, or when none was verified. */
  get winnerIndex(): number | null {
    return this.winnerSlot;
  }

  /** Attempts still working (not submitted, not ended), by slot: for the candidates' lines. */
  get pending(): number[] {
    return Array.from({ length: this.of }, (_, i) => i + 1).filter((slot) => !this.records.has(slot));
  }

  /**
   * Attempt `slot` was verified: it waits for the others and learns whether it won. After the
   * choice (the winner back from a failed landing, re-verified on a new base) it is told at once.
   */
  submit(slot: number, record: AttemptRecord, signal: AbortSignal): Promise<Verdict> {
    if (this.choice) return Promise.resolve(slot === this.winnerSlot ? 'won' : 'lost');
    if (signal.aborted) return Promise.resolve('aborted');
    const verdict = new Promise<Verdict>((resolve) => {
      const onAbort = () => {
        this.waiting.delete(slot);
        resolve('aborted');
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.set(slot, (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      });
    });
    this.records.set(slot, record);
    // `onDecided` reports its own problems (a record it could not write is a logged warning).
    this.decideWhenAllIn().catch(() => undefined);
    return verdict;
  }

  /** Attempt `slot` ended without a verified change (or the runner could not run it). */
  async ended(slot: number, record: AttemptRecord): Promise<void> {
    if (this.choice || this.records.has(slot)) return;
    this.records.set(slot, record);
    await this.decideWhenAllIn();
  }

  private async decideWhenAllIn(): Promise<void> {
    if (this.choice || this.records.size < this.of) return;
    const records = [...this.records.entries()].sort(([a], [b]) => a - b).map(([, r]) => r);
    const choice = chooseAttempt(records);
    this.choice = choice;
    const winner = [...this.records.entries()].find(([, r]) => r.lane === choice.winner);
    this.winnerSlot = winner ? winner[0] : null;
    try {
      await this.onDecided(choice, records);
    } finally {
      // Whatever became of the record, no attempt is left waiting.
      for (const [slot, wake] of this.waiting) wake(slot === this.winnerSlot ? 'won' : 'lost');
      this.waiting.clear();
    }
  }
}
