import type { FailureReason } from '../protocol/workflow.js';

/**
 * One budget across lanes (issue 19): before a lane starts a tick it reserves that tick's worst
 * case (seed 001 Q2: orchestrator call and its retry, one builder call, each at its
 * `max_budget_usd`), in dollars and in agent calls; the reservation is released when the tick's
 * real spend is known. Every cap the workflow runs under is one limit here: the workflow's
 * `max_cost_usd` and the IMPLEMENTATION phase's own `max_cost_usd` and `max_calls` (issue 18's
 * per-phase caps). A lane whose worst case does not fit one of them beside what is spent and
 * reserved waits for another lane to settle, or, when no lane could free anything, the workflow
 * stops on that cap. So N lanes can never overspend any cap together, whatever they report.
 */

export interface Spend {
  readonly usd: number;
  readonly calls: number;
}

export interface BudgetLimit {
  /** The setting, as the human finds it in relais.config.json (`workflow.max_cost_usd`). */
  readonly setting: string;
  /** How the workflow fails when this cap is reached. */
  readonly reason: Extract<FailureReason, 'budget_exhausted' | 'phase_budget_exhausted'>;
  readonly unit: 'usd' | 'calls';
  readonly cap: number;
  /** Spent under this cap before the lanes started. */
  readonly spent: number;
}

/** A cap a worst-case tick can never fit under any more, with the numbers. */
export interface Exhausted {
  readonly reason: BudgetLimit['reason'];
  readonly detail: string;
}

const EPSILON = 1e-9;

export class BudgetReservations {
  private readonly spent: number[];
  private readonly held = new Map<string, Spend>();
  private waiters: Array<() => void> = [];

  constructor(private readonly limits: readonly BudgetLimit[]) {
    this.spent = limits.map((l) => l.spent);
  }

  /** What the lanes hold now, in dollars and calls. */
  get reserved(): Spend {
    let usd = 0;
    let calls = 0;
    for (const amount of this.held.values()) {
      usd += amount.usd;
      calls += amount.calls;
    }
    return { usd, calls };
  }

  /** True when `worst` fits under every cap beside what is spent and reserved; then it is held for `lane`. */
  tryReserve(lane: string, worst: Spend): boolean {
    if (this.held.has(lane)) throw new Error(`lane ${lane} already holds a reservation`);
    const reserved = this.reserved;
    const fits = this.limits.every(
      (limit, i) =>
        (this.spent[i] ?? 0) + amountIn(limit, reserved) + amountIn(limit, worst) <= limit.cap + EPSILON,
    );
    if (fits) this.held.set(lane, worst);
    return fits;
  }

  /** The tick ended: its reservation goes, its real spend counts. */
  settle(lane: string, real: Spend): void {
    this.held.delete(lane);
    this.limits.forEach((limit, i) => {
      this.spent[i] = (this.spent[i] ?? 0) + Math.max(0, amountIn(limit, real));
    });
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

  /** Nothing could ever fit `worst` again: no reservation is held that might be freed. */
  hopeless(worst: Spend): Exhausted | null {
    if (this.held.size > 0) return null;
    for (const [i, limit] of this.limits.entries()) {
      const spent = this.spent[i] ?? 0;
      const need = amountIn(limit, worst);
      if (spent + need <= limit.cap + EPSILON) continue;
      return {
        reason: limit.reason,
        detail:
          limit.unit === 'usd'
            ? `one more worst-case tick ($${need.toFixed(2)}) does not fit beside the $${spent.toFixed(2)} spent under ${limit.setting} $${limit.cap.toFixed(2)}`
            : `one more worst-case tick (${need} agent calls) does not fit beside the ${spent} made under ${limit.setting} ${limit.cap}`,
      };
    }
    return null;
  }
}

function amountIn(limit: BudgetLimit, spend: Spend): number {
  return limit.unit === 'usd' ? spend.usd : spend.calls;
}
