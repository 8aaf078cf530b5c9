import { describe, expect, it } from 'vitest';
import { configSchema } from '../../source/engine/protocol/config.js';
import { freshState } from '../../source/engine/protocol/state.js';
import {
  applyDelta,
  budgetSummary,
  budgetWarnings,
  ensureMilestone,
  knownSpendUsd,
  reservationShortfalls,
  reserveCall,
  settleCall,
  worstCaseTick,
} from '../../source/engine/workspace/ledger.js';

const now = new Date('2026-11-22T00:00:00Z');
const config = configSchema.parse({
  budgets: {
    per_milestone: {
      max_ticks: 10,
      max_orchestrator_calls: 20,
      max_builder_calls: 10,
      max_verify_runs: 30,
      max_estimated_cost_usd: 5,
    },
  },
  verification: {
    templates: [
      { id: 'a', cmd: 'x' },
      { id: 'b', cmd: 'y' },
    ],
  },
});

describe('budget ledger (seed 000 §12)', () => {
  it('the worst-case tick counts the parse retry, one builder call and every template once per phase', () => {
    expect(worstCaseTick(config)).toEqual({
      ticks: 1,
      orchestrator_calls: 2,
      builder_calls: 1,
      verify_runs: 4,
      estimated_cost_usd: 0.4 * 2 + 1.5,
      patch_attempts: 0,
      unreported_usd: 0,
      unreported_calls: 0,
    });
  });

  it('reservation fails for exactly the counters that cannot cover one more worst-case tick', () => {
    const state = applyDelta(
      freshState(now),
      { ticks: 9, orchestrator_calls: 18, estimated_cost_usd: 2.8 },
      now,
    );
    expect(reservationShortfalls(state, config).map((s) => s.counter)).toEqual(['estimated_cost_usd']);
    const fuller = applyDelta(state, { orchestrator_calls: 1 }, now);
    expect(reservationShortfalls(fuller, config).map((s) => s.counter)).toEqual([
      'orchestrator_calls',
      'estimated_cost_usd',
    ]);
    expect(reservationShortfalls(freshState(now), config)).toEqual([]);
  });

  it('warns at the configured fraction, not before', () => {
    expect(budgetWarnings(applyDelta(freshState(now), { ticks: 7 }, now), config)).toEqual([]);
    expect(budgetWarnings(applyDelta(freshState(now), { ticks: 8 }, now), config)).toEqual([
      'ticks 8/10 (80%)',
    ]);
  });

  it('cost sums are rounded to a micro-dollar so the file stays stable', () => {
    let state = freshState(now);
    for (let i = 0; i < 10; i++) state = applyDelta(state, { estimated_cost_usd: 0.1 }, now);
    expect(state.budgets.estimated_cost_usd).toBe(1);
  });

  it('adopts a first milestone, then archives the old one and carries the current tick over', () => {
    const first = ensureMilestone(applyDelta(freshState(now), { ticks: 3 }, now), 'M1', now);
    expect(first).toMatchObject({ changed: true, state: { milestone_id: 'M1', budgets: { ticks: 3 } } });
    const spent = applyDelta(first.state, { ticks: 1, orchestrator_calls: 1 }, now);
    const moved = ensureMilestone(spent, 'M2', now, {
      ticks: 1,
      orchestrator_calls: 1,
      builder_calls: 0,
      verify_runs: 0,
      estimated_cost_usd: 0,
      patch_attempts: 0,
      unreported_usd: 0,
      unreported_calls: 0,
    });
    expect(moved.state.milestone_id).toBe('M2');
    expect(moved.state.budgets).toMatchObject({ ticks: 1, orchestrator_calls: 1 });
    expect(moved.state.archived_milestones).toEqual([
      {
        milestone_id: 'M1',
        budgets: expect.objectContaining({ ticks: 3, orchestrator_calls: 0 }),
        archived_at: now.toISOString(),
      },
    ]);
    expect(ensureMilestone(moved.state, 'M2', now).changed).toBe(false);
  });

  it('summarises used against caps', () => {
    expect(budgetSummary(freshState(now), config)).toBe(
      'ticks 0/10, orchestrator_calls 0/20, builder_calls 0/10, verify_runs 0/30, estimated_cost_usd $0.00/$5.00',
    );
  });
});

describe('reservations of agent calls (issue 4: a killed call is not money spent)', () => {
  const state = () => applyDelta(freshState(now), { estimated_cost_usd: 0.02 }, now);

  it('a call that reports its cost replaces its reservation with that cost', () => {
    const reserved = applyDelta(state(), reserveCall(1.5), now);
    expect(reserved.budgets).toMatchObject({
      estimated_cost_usd: 1.52,
      unreported_usd: 1.5,
      unreported_calls: 1,
    });
    const settled = applyDelta(reserved, settleCall(1.5, { costUsd: 0.0019, costReported: true }), now);
    expect(settled.budgets).toMatchObject({
      estimated_cost_usd: 0.0219,
      unreported_usd: 0,
      unreported_calls: 0,
    });
    expect(knownSpendUsd(settled.budgets)).toBe(0.0219);
    expect(settled.totals).toMatchObject({
      estimated_cost_usd: 0.0219,
      unreported_usd: 0,
      unreported_calls: 0,
    });
  });

  it('a killed call keeps its maximum against the cap, marked as held, not as spend', () => {
    let s = state();
    for (let i = 0; i < 2; i++) {
      s = applyDelta(s, reserveCall(1.5), now);
      s = applyDelta(s, settleCall(1.5, { costUsd: 0, costReported: false }), now);
    }
    // The caps still see $3.02 (the most that may have been spent)...
    expect(s.budgets.estimated_cost_usd).toBe(3.02);
    expect(reservationShortfalls(s, config).map((r) => r.counter)).toContain('estimated_cost_usd');
    // ...but what was reported spent is $0.02, and two calls are of unknown cost.
    expect(knownSpendUsd(s.budgets)).toBe(0.02);
    expect(s.budgets).toMatchObject({ unreported_usd: 3, unreported_calls: 2 });
  });

  it('a runner killed during the call (no settle at all) leaves the reservation marked as held', () => {
    const s = applyDelta(state(), reserveCall(1.5), now);
    expect(knownSpendUsd(s.budgets)).toBe(0.02);
    expect(s.budgets.unreported_calls).toBe(1);
  });

  it('a CLI that takes no maximum holds nothing, but its call still counts as unknown until it reports', () => {
    const s = applyDelta(state(), reserveCall(0), now);
    expect(s.budgets).toMatchObject({ estimated_cost_usd: 0.02, unreported_usd: 0, unreported_calls: 1 });
    const done = applyDelta(s, settleCall(0, { costUsd: 0 }), now);
    expect(done.budgets.unreported_calls).toBe(0);
  });

  it('the held part moves with the tick to a new milestone, and older files read as nothing held', () => {
    const first = ensureMilestone(state(), 'M1', now).state;
    const tick = reserveCall(1.5);
    const held = applyDelta(first, tick, now);
    const moved = ensureMilestone(held, 'M2', now, {
      ...freshState(now).budgets,
      ...tick,
    } as typeof held.budgets);
    expect(moved.state.budgets).toMatchObject({ unreported_usd: 1.5, unreported_calls: 1 });
    expect(moved.state.archived_milestones[0]?.budgets).toMatchObject({
      unreported_usd: 0,
      unreported_calls: 0,
    });
  });
});
