import type { RelaisConfig } from '../protocol/config.js';
import type { Ledger, WorkspaceState } from '../protocol/state.js';
import { emptyLedger } from '../protocol/state.js';

/**
 * Pure budget arithmetic over STATE.json (seed 000 §12, seed 001 PR1). Nothing here does I/O, so
 * preflight, `relais status` and the tick share one definition of "exhausted" and "warning".
 */

export type LedgerDelta = Partial<Ledger>;

export function applyDelta(state: WorkspaceState, delta: LedgerDelta, now: Date): WorkspaceState {
  const budgets = { ...state.budgets };
  const totals = { ...state.totals };
  for (const key of Object.keys(delta) as (keyof Ledger)[]) {
    // No counter goes below zero (a settled reservation cannot free more than was held).
    budgets[key] = roundCost(key, Math.max(0, budgets[key] + (delta[key] ?? 0)));
    totals[key] = roundCost(key, Math.max(0, totals[key] + (delta[key] ?? 0)));
  }
  return { ...state, budgets, totals, updated_at: now.toISOString() };
}

function roundCost(key: keyof Ledger, value: number): number {
  // Cost is a float sum; rounding to 1e-6 keeps the file stable and readable.
  return key === 'estimated_cost_usd' || key === 'unreported_usd' ? Math.round(value * 1e6) / 1e6 : value;
}

/**
 * An agent call is about to start: its maximum (`maxUsd`, its --max-budget-usd; 0 for a CLI that
 * takes none) is booked against the cap now and marked as a reservation, not spend, so a call
 * killed before it reports (or a runner killed meanwhile) is never taken for money spent.
 */
export function reserveCall(maxUsd: number): LedgerDelta {
  return { estimated_cost_usd: maxUsd, unreported_usd: maxUsd, unreported_calls: 1 };
}

/**
 * The call ended. Its cost reported: the reservation becomes that cost. Not reported: the
 * reservation stays, still marked as such (nothing is known to replace it with).
 */
export function settleCall(maxUsd: number, call: { costUsd: number; costReported?: boolean }): LedgerDelta {
  if (call.costReported === false) return {};
  return { estimated_cost_usd: call.costUsd - maxUsd, unreported_usd: -maxUsd, unreported_calls: -1 };
}

/** What the agent CLIs reported as spent: the cap-guarding total without the reservations. */
export function knownSpendUsd(ledger: Ledger): number {
  return Math.max(0, Math.round((ledger.estimated_cost_usd - ledger.unreported_usd) * 1e6) / 1e6);
}

/**
 * Moves the ledger to `milestoneId`. A first milestone is adopted; a different one archives the
 * previous milestone's counters and starts fresh ones (budgets are per milestone). `tickSoFar` is
 * what the current tick already spent: it belongs to the new milestone, so it moves with it.
 */
export function ensureMilestone(
  state: WorkspaceState,
  milestoneId: string,
  now: Date,
  tickSoFar: Ledger = emptyLedger(),
): { state: WorkspaceState; changed: boolean } {
  if (state.milestone_id === milestoneId) return { state, changed: false };
  if (state.milestone_id === null) {
    return { state: { ...state, milestone_id: milestoneId, updated_at: now.toISOString() }, changed: true };
  }
  const previous = subtract(state.budgets, tickSoFar);
  const archived = [
    ...state.archived_milestones,
    { milestone_id: state.milestone_id, budgets: previous, archived_at: now.toISOString() },
  ].slice(-1000);
  return {
    state: {
      ...state,
      milestone_id: milestoneId,
      budgets: { ...tickSoFar },
      budget_warning: false,
      archived_milestones: archived,
      updated_at: now.toISOString(),
    },
    changed: true,
  };
}

function subtract(a: Ledger, b: Ledger): Ledger {
  const out = { ...a };
  for (const key of Object.keys(out) as (keyof Ledger)[])
    out[key] = roundCost(key, Math.max(0, a[key] - b[key]));
  return out;
}

type Caps = RelaisConfig['budgets']['per_milestone'];

/** Counters with a per-milestone cap (patch attempts have their own cap, checked per task). */
type CappedKey = Exclude<keyof Ledger, 'patch_attempts' | 'unreported_usd' | 'unreported_calls'>;

const CAP_OF: Record<CappedKey, keyof Caps> = {
  ticks: 'max_ticks',
  orchestrator_calls: 'max_orchestrator_calls',
  builder_calls: 'max_builder_calls',
  verify_runs: 'max_verify_runs',
  estimated_cost_usd: 'max_estimated_cost_usd',
};

const LEDGER_KEYS = Object.keys(CAP_OF) as CappedKey[];

/** The most one tick can spend: one orchestrator retry, one builder call, every template once per phase. */
export function worstCaseTick(config: RelaisConfig): Ledger {
  const retries = config.orchestrator.max_parse_retries_per_tick;
  return {
    ticks: 1,
    orchestrator_calls: 1 + retries,
    builder_calls: 1,
    verify_runs: Math.min(32, 2 * config.verification.templates.length),
    estimated_cost_usd:
      config.orchestrator.max_budget_usd * (1 + retries) + config.builder.claude_code.max_budget_usd,
    patch_attempts: 0,
    unreported_usd: 0,
    unreported_calls: 0,
  };
}

/**
 * Seed 001 PR1: a hard cap already reached (used >= cap). Checked before the reservation so the
 * human learns "the cap is hit", not "the next tick might not fit".
 */
export function capsReached(state: WorkspaceState, config: RelaisConfig): string[] {
  const caps = config.budgets.per_milestone;
  return LEDGER_KEYS.filter((key) => state.budgets[key] >= caps[CAP_OF[key]] - 1e-9).map(
    (key) =>
      `${key}: ${formatAmount(key, state.budgets[key])} used, cap ${formatAmount(key, caps[CAP_OF[key]])}`,
  );
}

/** Spend of one `relais loop` so far, across milestones. */
export interface RunTotals {
  ticks: number;
  calls: number;
  /** Cap-guarding: reported costs plus the reservations of calls that never reported one. */
  costUsd: number;
}

/** What one tick spent: `costUsd` includes `unreportedUsd`, held for `unreportedCalls` calls of unknown cost. */
export interface TickSpent extends RunTotals {
  unreportedUsd: number;
  unreportedCalls: number;
}

/**
 * Run-wide caps (config `loop`, `--max-ticks`): does one more worst-case tick fit in this run?
 * They hold across milestones, unlike the per-milestone counters.
 */
export function runCapShortfalls(run: RunTotals, config: RelaisConfig, maxTicks: number | null): string[] {
  const worst = worstCaseTick(config);
  const tickCap = Math.min(config.loop.max_ticks_per_run, maxTicks ?? Number.POSITIVE_INFINITY);
  const out: string[] = [];
  if (run.ticks + 1 > tickCap) out.push(`run ticks: ${run.ticks} done, cap ${tickCap}`);
  const calls = worst.orchestrator_calls + worst.builder_calls;
  if (run.calls + calls > config.loop.max_calls_per_run) {
    out.push(
      `run calls: ${run.calls} used + ${calls} worst-case tick > cap ${config.loop.max_calls_per_run}`,
    );
  }
  if (run.costUsd + worst.estimated_cost_usd > config.loop.max_cost_usd_per_run + 1e-9) {
    out.push(
      `run cost: $${run.costUsd.toFixed(2)} used + $${worst.estimated_cost_usd.toFixed(2)} worst-case tick > cap $${config.loop.max_cost_usd_per_run.toFixed(2)}`,
    );
  }
  return out;
}

export interface ReservationShortfall {
  readonly counter: keyof Ledger;
  readonly used: number;
  readonly needed: number;
  readonly cap: number;
}

/** Which counters cannot cover one more worst-case tick (empty when the tick may start). */
export function reservationShortfalls(state: WorkspaceState, config: RelaisConfig): ReservationShortfall[] {
  const caps = config.budgets.per_milestone;
  const worst = worstCaseTick(config);
  return LEDGER_KEYS.filter((key) => state.budgets[key] + worst[key] > caps[CAP_OF[key]] + 1e-9).map(
    (key) => ({
      counter: key,
      used: state.budgets[key],
      needed: worst[key],
      cap: caps[CAP_OF[key]],
    }),
  );
}

export function describeShortfall(s: ReservationShortfall): string {
  return `${s.counter}: ${formatAmount(s.counter, s.used)} used + ${formatAmount(s.counter, s.needed)} worst-case tick > cap ${formatAmount(s.counter, s.cap)}`;
}

/** Counters at or above the warning fraction of their cap (seed 000 §12: 80% warning). */
export function budgetWarnings(state: WorkspaceState, config: RelaisConfig): string[] {
  const caps = config.budgets.per_milestone;
  const fraction = config.budgets.warn_at_fraction;
  return LEDGER_KEYS.flatMap((key) => {
    const cap = caps[CAP_OF[key]];
    if (cap <= 0) return [];
    const used = state.budgets[key];
    if (used < fraction * cap) return [];
    return [
      `${key} ${formatAmount(key, used)}/${formatAmount(key, cap)} (${Math.round((used / cap) * 100)}%)`,
    ];
  });
}

/** "ticks 3/200, orchestrator_calls 4/260, ..." for prompts, status and reports. */
/** Each counter against its cap; without a config that loads, the counters alone. */
export function budgetSummary(state: WorkspaceState, config: RelaisConfig | null): string {
  const caps = config?.budgets.per_milestone;
  const line = LEDGER_KEYS.map(
    (key) =>
      `${key} ${formatAmount(key, state.budgets[key])}${caps ? `/${formatAmount(key, caps[CAP_OF[key]])}` : ''}`,
  ).join(', ');
  return caps ? line : `${line} (caps unknown: relais.config.json does not load)`;
}

function formatAmount(key: keyof Ledger, value: number): string {
  return key === 'estimated_cost_usd' ? `$${value.toFixed(2)}` : String(value);
}
