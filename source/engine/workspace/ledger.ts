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
  for (const key of Object.keys(delta) as (keyof Ledger)[]) {
    budgets[key] = roundCost(key, budgets[key] + (delta[key] ?? 0));
  }
  return { ...state, budgets, updated_at: now.toISOString() };
}

function roundCost(key: keyof Ledger, value: number): number {
  // Cost is a float sum; rounding to 1e-6 keeps the file stable and readable.
  return key === 'estimated_cost_usd' ? Math.round(value * 1e6) / 1e6 : value;
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

const CAP_OF: Record<keyof Ledger, keyof Caps> = {
  ticks: 'max_ticks',
  orchestrator_calls: 'max_orchestrator_calls',
  builder_calls: 'max_builder_calls',
  verify_runs: 'max_verify_runs',
  estimated_cost_usd: 'max_estimated_cost_usd',
};

const LEDGER_KEYS = Object.keys(CAP_OF) as (keyof Ledger)[];

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
  };
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
export function budgetSummary(state: WorkspaceState, config: RelaisConfig): string {
  const caps = config.budgets.per_milestone;
  return LEDGER_KEYS.map(
    (key) => `${key} ${formatAmount(key, state.budgets[key])}/${formatAmount(key, caps[CAP_OF[key]])}`,
  ).join(', ');
}

function formatAmount(key: keyof Ledger, value: number): string {
  return key === 'estimated_cost_usd' ? `$${value.toFixed(2)}` : String(value);
}
