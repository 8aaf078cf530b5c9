import { describe, expect, test } from 'vitest';
import type { EngineEvent } from '../../source/engine/events.js';
import { phaseRows, spendLabel } from '../../source/ui/panels/PhaseTimeline.js';
import { enter, Script } from './helpers.js';

// Per-phase budgets in the app (issue 18): each phase row carries what its agent calls cost
// against its caps (workflow.spend), and the header's total follows the same ledger.

const started: EngineEvent = {
  type: 'workflow.started',
  project: '/tmp/demo',
  prd_title: 'Todo app',
  base_branch: 'main',
  feature_branch: 'ralphy/todo',
  engine: 'ticks',
  resumed_from: 'IMPLEMENTATION',
  completed_phases: ['SPECIFICATION', 'AWAITING_SPEC_VALIDATION'],
  max_cost_usd: 5,
  cost_usd: 0.5,
  // A resume shows what the earlier run spent, not $0.
  phases: { SPECIFICATION: { cost_usd: 0.5, calls: 1, max_cost_usd: 1, max_calls: null } },
  tasks: [],
};

const spend = (calls: number, cost: number): EngineEvent => ({
  type: 'workflow.spend',
  phase: 'IMPLEMENTATION',
  cost_usd: cost,
  calls,
  max_cost_usd: null,
  max_calls: 10,
  total_cost_usd: 0.5 + cost,
});

describe('phase spend in the timeline', () => {
  test('each phase shows its spend against its caps; the header total follows', () => {
    const s = new Script()
      .emit(started)
      .emit(enter('IMPLEMENTATION'))
      .emit(spend(2, 0.25))
      .emit(spend(4, 1.5));
    const rows = s.state.phases;
    expect(rows.find((r) => r.state === 'SPECIFICATION')?.spend).toEqual({
      costUsd: 0.5,
      calls: 1,
      maxCostUsd: 1,
      maxCalls: null,
    });
    expect(spendLabel(rows.find((r) => r.state === 'SPECIFICATION')?.spend)).toBe('$0.5000/$1.00 1 call');
    expect(spendLabel(rows.find((r) => r.state === 'IMPLEMENTATION')?.spend)).toBe('$1.50 4/10 calls');
    expect(s.state.header.costUsd).toBe(2);
    const text = phaseRows(s.state, 60)
      .map((row) => row.map((seg) => ('text' in seg ? seg.text : '')).join(''))
      .join('\n');
    expect(text).toContain('SPECIFICATION · $0.5000/$1.00 1 call');
    // A phase without calls shows nothing.
    expect(spendLabel(rows.find((r) => r.state === 'QA')?.spend)).toBe('');
  });
});
