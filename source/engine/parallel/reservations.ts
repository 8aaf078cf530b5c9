/**
 * One budget across lanes (issue 19): before a lane starts a tick it reserves that tick's worst
 * case (seed 001 Q2: orchestrator call and its retry, one builder call, each at its
 * `max_budget_usd`); the reservation is released when the tick's real cost is known. A lane
 * whose worst case does not fit beside what is spent and reserved waits for another lane to
 * settle, or, when no lane could free anything, the workflow stops on its cap. So N lanes can
 * never overspend the cap together, whatever they report.
 */
export class BudgetReservations {
  private spent: number;
  private readonly held = new Map<string, number>();
  private waiters: Array<() => void> = [];

  constructor(
    private readonly cap: number | null,
    spentSoFar: number,
  ) {
    this.spent = spentSoFar;
  }

  get reserved(): number {
    let sum = 0;
    for (const amount of this.held.values()) sum += amount;
    return sum;
  }

  get total(): number {
    return this.spent;
  }

  /** True when `amount` fits beside what is spent and reserved; then it is held for `lane`. */
  tryReserve(lane: string, amount: number): boolean {
    if (this.held.has(lane)) throw new Error(`lane ${lane} already holds a reservation`);
    if (this.cap !== null && this.spent + this.reserved + amount > this.cap + 1e-9) return false;
    this.held.set(lane, amount);
    return true;
  }

  /** The tick ended: its reservation goes, its real cost counts. */
  settle(lane: string, cost: number): void {
    this.held.delete(lane);
    this.spent += Math.max(0, cost);
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Resolves at the next settle (a lane waiting for room), or when `signal` aborts. */
  nextSettle(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const done = () => {
        signal.removeEventListener('abort', done);
        resolve();
      };
      signal.addEventListener('abort', done, { once: true });
      this.waiters.push(done);
    });
  }

  /** Nothing could ever fit: no reservation is held that might be freed. */
  hopeless(amount: number): boolean {
    return this.cap !== null && this.held.size === 0 && this.spent + amount > this.cap + 1e-9;
  }
}
