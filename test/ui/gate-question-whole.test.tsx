import { describe, expect, test, vi } from 'vitest';

vi.hoisted(() => {
  delete process.env.CI;
});

import type { EngineEvent } from '../../source/engine/events.js';
import type { GateRequest } from '../../source/engine/gates.js';
import { rowWidth } from '../../source/ui/components/row.js';
import { headerRow } from '../../source/ui/panels/Header.js';
import { enter, KEY, renderApp, Script } from './helpers.js';

// The newcomer's pass, defect 9: at a gate the question is never cut. It wraps; on a small
// terminal the other panels give way; what still does not fit scrolls inside the gate, which says
// so and with which keys. The header keeps the phase, the elapsed time and the cost at any width.

const question: GateRequest = {
  gate: 'plan',
  title: 'Planner, round 1: 1 open question',
  lines: [
    'Relay: One question before I draft the spec:',
    'For the reporter (what the product must do):',
    '  1. Should accented letters (é, ü) keep their letter without the accent, or be dropped?',
    '     why: It decides the character rule of the spec, and the tests that pin it down for every title.',
    '',
    'Answer by number ("1: keep them", several lines are fine) or in your own words; "proceed" goes on to the spec, the planner assuming what is still open.',
  ],
  answer: 'text',
};

const started: EngineEvent = {
  type: 'workflow.started',
  project: 'slugify-demo',
  prd_title: 'Slugify titles',
  base_branch: 'main',
  feature_branch: 'ralphy/slugify-titles',
  engine: 'ticks',
  resumed_from: null,
  max_cost_usd: 50,
  tasks: [{ number: 1, title: 'Trim and collapse spaces', status: 'pending' }],
};

/**
 * The gate panel's text, its rows joined by spaces (a wrapped line splits between rows): only the
 * gate's column, so a panel beside it (two columns) does not mix in.
 */
function wordsOf(frame: string): string {
  const rows = frame.split('\n');
  const top = rows.findIndex((row) => row.includes('╭─ Planner'));
  if (top < 0) return '';
  const x = [...(rows[top] ?? '')].join('').indexOf('╭─ Planner');
  const inside: string[] = [];
  for (const row of rows.slice(top + 1)) {
    const chars = [...row].slice(x);
    if (chars[0] === '╰') break;
    const end = chars.indexOf('│', 1);
    inside.push(chars.slice(1, end < 0 ? undefined : end).join(''));
  }
  return inside.join(' ').replace(/\s+/g, ' ');
}

function showsWhole(frame: string, line: string): boolean {
  return wordsOf(frame).includes(line.trim().replace(/\s+/g, ' '));
}

async function atTheQuestion(columns: number, rows: number) {
  const s = new Script('workflow').emit([started, enter('PLANNING')]);
  for (let i = 0; i < 40; i++)
    s.emit({ type: 'agent.output', role: 'planner', text: `planner line ${i}`, kind: 'text' });
  const app = renderApp(s.store, { columns, rows });
  const answered = app.controller.gates.ask(question, new AbortController().signal);
  await app.waitFor('Planner, round 1');
  return { app, answered };
}

describe('a gate shows its question whole', () => {
  test.each([
    [80, 24],
    [100, 34],
    [120, 35],
  ])('at %ix%i every line of the question shows, wrapped, never cut', async (columns, rows) => {
    const { app } = await atTheQuestion(columns, rows);
    const frame = app.frame();
    for (const line of question.lines.filter(Boolean)) expect(showsWhole(frame, line), line).toBe(true);
    expect(frame).not.toMatch(/… \d+ more/);
    expect(frame).not.toContain('↓');
    // The answer box and its keys are still there.
    expect(frame).toContain('› ▌');
    expect(frame).toContain('Enter send');
    app.unmount();
  });

  test('at 60x15 the question scrolls inside the gate: it says how much is below, PgDn brings it in', async () => {
    const { app, answered } = await atTheQuestion(60, 15);
    let frame = app.frame();
    expect(frame).toContain('Relay: One question before I draft the spec:');
    expect(frame).toMatch(/↓ \d+ more \(PgDn\)/);
    expect(frame).toContain('› ▌');
    // PgDn until the end: every line has been on screen at some point, the last one at the end.
    const seen = new Set<string>();
    let pages = 0;
    while (pages < 12) {
      for (const line of question.lines.filter(Boolean)) if (showsWhole(frame, line)) seen.add(line);
      if (!frame.includes('more (PgDn)') && !frame.includes('more (PgUp PgDn)')) break;
      const before = frame;
      app.press(KEY.pageDown);
      await app.waitFor((f) => f !== before, 'the question scrolled');
      frame = app.frame();
      pages++;
    }
    expect(frame).toMatch(/↑ \d+ above \(PgUp\)/);
    expect(showsWhole(frame, question.lines.at(-1) ?? '')).toBe(true);
    // Each line showed whole at least once, except those longer than the gate's window, whose words
    // showed across pages: at the least the accents and the instructions were read.
    expect(wordsOf(frame) + [...seen].join(' ')).toContain('proceed');
    expect([...seen].some((line) => line.includes('é, ü'))).toBe(true);
    // Scrolling moved the question, not the answer: what is typed still goes in the box.
    app.press('1: keep them');
    await app.waitFor('1: keep them▌');
    app.press(KEY.enter);
    await expect(answered).resolves.toEqual({ decision: 'answer', by: 'human', text: '1: keep them' });
    app.unmount();
  });

  test('a question that fits leaves PgDn to the output', async () => {
    const { app } = await atTheQuestion(120, 40);
    // Following the newest line: the output's border counts lines above only.
    expect(app.frame()).not.toMatch(/↓ ?\d/);
    app.press(KEY.pageUp);
    await app.waitFor((f) => /↓ ?\d+/.test(f), 'the output scrolled back: lines below it now');
    expect(app.frame()).toContain('Relay: One question before I draft the spec:');
    app.unmount();
  });
});

describe('the header keeps where the run is, its time and its cost', () => {
  function implementing(): Script {
    return new Script('workflow').emit([
      started,
      enter('SPECIFICATION'),
      enter('AWAITING_SPEC_VALIDATION'),
      enter('IMPLEMENTATION'),
      { type: 'phase.changed', phase: 'BUILD' },
      {
        type: 'workflow.spend',
        phase: 'IMPLEMENTATION',
        cost_usd: 0.007,
        calls: 1,
        max_cost_usd: null,
        max_calls: null,
        total_cost_usd: 0.007,
      },
    ]);
  }

  test.each([60, 80, 100])('at %i columns: phase, elapsed time and the whole cost, never cut', (columns) => {
    const state = implementing().state;
    const row = headerRow(state, columns);
    const line = row.map((segment) => ('text' in segment ? segment.text : '*')).join('');
    expect(rowWidth(row)).toBeLessThanOrEqual(columns);
    expect(line).not.toMatch(/…\s*$/);
    expect(line).toMatch(/IMPLEMENTATION|build/);
    expect(line).toMatch(/\d\d:\d\d/);
    expect(line).toMatch(/\$0\.00\d+/);
    // The project and the branch stay from 80 columns on (both were dropped there).
    if (columns >= 80) {
      expect(line).toContain('demo ·');
      expect(line).toContain('ralphy/slug');
    }
  });
});
