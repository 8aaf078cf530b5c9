import { describe, expect, test } from 'vitest';
import type { EngineEvent } from '../../source/engine/events.js';
import { headerRow } from '../../source/ui/panels/Header.js';
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
  phases: {
    SPECIFICATION: {
      cost_usd: 0.5,
      calls: 1,
      unreported_usd: 0,
      unreported_calls: 0,
      max_cost_usd: 1,
      max_calls: null,
    },
  },
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
      held: { usd: 0, calls: 0 },
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

const plain = (row: ReturnType<typeof headerRow>) =>
  row.map((seg) => ('text' in seg ? seg.text : '')).join('');

describe('calls killed before they reported a cost (issue 4)', () => {
  // Two builder calls interrupted by Ctrl-C: each is held at its $1.50 maximum against the caps,
  // the calls that did report cost $0.0100 in all. Shown as what it is, never as $3.01 spent.
  const killed: EngineEvent = {
    type: 'workflow.spend',
    phase: 'IMPLEMENTATION',
    cost_usd: 3.01,
    calls: 4,
    unreported_usd: 3,
    unreported_calls: 2,
    max_cost_usd: null,
    max_calls: null,
    total_cost_usd: 3.01,
    total_unreported_usd: 3,
    total_unreported_calls: 2,
  };

  test('the header says what was spent and what is only held, and the percentage guards the cap', () => {
    const s = new Script()
      .emit({ ...started, cost_usd: 0, phases: {}, max_cost_usd: 50 })
      .emit(enter('IMPLEMENTATION'))
      .emit(killed);
    expect(s.state.header.held).toEqual({ usd: 3, calls: 2 });
    const line = plain(headerRow(s.state));
    expect(line).toContain('$0.0100 spent + $3.00 held for 2 calls of unknown cost / $50.00 (6%)');
    expect(line).not.toContain('$3.01');
  });

  test('at 80 columns the header says it shortly, and the cap still shows', () => {
    const s = new Script()
      .emit({ ...started, cost_usd: 0, phases: {}, max_cost_usd: 50 })
      .emit(enter('IMPLEMENTATION'))
      .emit(killed);
    const line = plain(headerRow(s.state, 80));
    expect(line).toContain('$0.0100 + $3.00 held (2 unknown)/$50.00');
    expect(line.length).toBeLessThanOrEqual(80);
  });

  test('the phase row splits the reported part from the held part', () => {
    const s = new Script().emit(started).emit(enter('IMPLEMENTATION')).emit(killed);
    const spend = s.state.phases.find((r) => r.state === 'IMPLEMENTATION')?.spend;
    expect(spendLabel(spend)).toBe('$0.0100 + $3.00 held (2 unknown) 4 calls');
  });

  test('a resume starts from the recorded split, not from one merged number', () => {
    const s = new Script().emit({
      ...started,
      cost_usd: 1.5013,
      unreported_usd: 1.5,
      unreported_calls: 1,
      max_cost_usd: 50,
    });
    expect(plain(headerRow(s.state))).toContain('$0.0013 spent + $1.50 held for 1 call of unknown cost');
  });

  test('with nothing held the header is one amount, as before', () => {
    const s = new Script().emit({ ...started, max_cost_usd: 50 });
    expect(plain(headerRow(s.state))).toContain('$0.5000 / $50.00 (1%)');
    expect(plain(headerRow(s.state))).not.toContain('held');
  });
});
