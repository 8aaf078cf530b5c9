import { describe, expect, test, vi } from 'vitest';

vi.hoisted(() => {
  delete process.env.CI;
});

import { rowWidth, spinner, text, wrapRow } from '../../source/ui/components/row.js';
import { tooSmallLines } from '../../source/ui/components/Screen.js';
import { screenLayout } from '../../source/ui/layout/screen-layout.js';
import { enter, KEY, renderApp, Script } from './helpers.js';

// Issue 16 item 4: an error and its `Fix:` are never cut at a panel's edge, in the Output panel
// (a workflow) nor in the Result panel (a loop's end); and the too-small message reads whole.

const SIZES = [
  [60, 15],
  [80, 24],
  [120, 35],
  [200, 50],
] as const;

const ERROR =
  'Cannot merge lane 2: the merged tree failed its checks (npm test exited 1 after 41 s; 3 tests failed in test/slug.test.ts)';
const FIX =
  'Fix: read the failing tests in relais/history/20250101T100000Z-abcdef/verify.log, correct the code on the branch ralphy/slugify-titles, then run ralphy start again to resume from the merge';
const REMEDIATION =
  'Raise budgets.per_milestone.max_builder_calls in relais.config.json, or start the next milestone with a fresh ledger, then run relais loop again from this commit';

/** The text of the column `[from, to)` of every line of the screen, with no border and no space. */
function columnText(frame: string, from: number, to: number): string {
  return frame
    .split('\n')
    .map((line) => [...line].slice(from, to).join(''))
    .join('')
    .replace(/[│╭╮╰╯─\s]/g, '');
}

/** The columns of the panel `id`, from the layout the app used. */
function columnOf(
  view: 'workflow' | 'loop',
  state: Script['state'],
  id: string,
  columns: number,
  rows: number,
) {
  const layout = screenLayout(state, columns, rows);
  if (layout.kind !== 'panels') throw new Error(`no panels at ${columns}x${rows}`);
  let from = 0;
  for (const column of layout.stack) {
    if (column.panels.some((p) => p.id === id)) return { from, to: from + column.width };
    from += column.width;
  }
  throw new Error(`${view}: no ${id} panel at ${columns}x${rows}`);
}

const squeeze = (text: string) => text.replace(/\s/g, '');

describe('long lines are wrapped, never cut', () => {
  for (const [columns, rows] of SIZES) {
    test(`an error and its Fix in the Output panel, whole, at ${columns}x${rows}`, async () => {
      const s = new Script().emit([
        {
          type: 'workflow.started',
          project: 'demo',
          prd_title: 'Slugify titles',
          base_branch: 'main',
          feature_branch: 'ralphy/slugify-titles',
          engine: 'ticks',
          resumed_from: null,
          max_cost_usd: 5,
          tasks: [],
        },
        enter('IMPLEMENTATION'),
        { type: 'log', level: 'error', message: ERROR },
        { type: 'log', level: 'info', message: FIX },
      ]);
      s.store.flush();
      const app = renderApp(s.store, { columns, rows });
      await app.waitFor((f) => f.includes('Output'), 'the output panel');
      const { from, to } = columnOf('workflow', s.state, 'output', columns, rows);
      // The newest line, the fix, shows whole; on a small screen the error is a line up.
      expect(columnText(app.frame(), from, to), app.frame()).toContain(squeeze(FIX));
      // A row at a time (↑), the error comes whole into view.
      for (let press = 0; press < 8 && !columnText(app.frame(), from, to).includes(squeeze(ERROR)); press++) {
        const before = app.frame();
        app.press(KEY.up);
        await app.waitFor((f) => f !== before, 'the output a row up');
      }
      expect(columnText(app.frame(), from, to), app.frame()).toContain(squeeze(ERROR));
      app.unmount();
    });

    test(`a loop's stop and its Fix in the Result panel, whole, at ${columns}x${rows}`, async () => {
      const s = new Script('loop').emit([
        {
          type: 'tick.finished',
          run_id: 'r1',
          verdict: 'blocked',
          code: 'BLOCKED_BUDGET_CAP',
          remediation: REMEDIATION,
          detail: 'builder_calls: 5 used + 1 worst-case tick > cap 5',
          blast_radius_line: '0 files',
          commit: null,
          report_path: 'relais/REPORT.md',
        },
      ]);
      s.store.setInteraction({ over: true });
      const app = renderApp(s.store, { columns, rows });
      await app.waitFor((f) => f.includes('Result'), 'the result panel');
      const { from, to } = columnOf('loop', s.state, 'result', columns, rows);
      expect(columnText(app.frame(), from, to), app.frame()).toContain(squeeze(`Fix: ${REMEDIATION}`));
      app.unmount();
    });
  }

  test('the too-small message reads whole at every size down to 20x6', async () => {
    for (const [columns, rows] of [
      [39, 24],
      [30, 8],
      [20, 6],
    ] as const) {
      const lines = tooSmallLines(columns, rows);
      expect(lines.length).toBeLessThanOrEqual(rows - 1);
      for (const line of lines) expect(line.length).toBeLessThanOrEqual(columns);
      const whole = lines.join(' ');
      expect(whole).not.toContain('…');
      expect(whole).toContain(`Terminal too small (${columns}×${rows}): Relais needs 40×10.`);
      const app = renderApp(new Script().store, { columns, rows });
      await app.waitFor((f) => f.includes('Terminal too small'), 'the message');
      expect(squeeze(app.frame())).toContain(squeeze(whole));
      app.unmount();
    }
  });
});

describe('wrapRow', () => {
  const plainOf = (rows: ReturnType<typeof wrapRow>) =>
    rows.map((row) => row.map((seg) => ('text' in seg ? seg.text : '*')).join(''));

  test('breaks after a space, indents what follows, keeps every character and style', () => {
    const row = [
      text('✗ ', { tone: 'error', bold: true }),
      text('Fix: run the tests again then commit', { tone: 'error' }),
    ];
    const rows = wrapRow(row, 16);
    expect(plainOf(rows)).toEqual(['✗ Fix: run the ', '  tests again ', '  then commit']);
    for (const r of rows) expect(rowWidth(r)).toBeLessThanOrEqual(16);
    // Styles follow the characters: the glyph stays bold red, the rest red.
    expect(rows[0]?.[0]).toMatchObject({ text: '✗ ', tone: 'error', bold: true });
    expect(rows.slice(1).every((r) => r.slice(1).every((seg) => 'text' in seg && seg.tone === 'error'))).toBe(
      true,
    );
  });

  test('a word longer than the row is cut mid-word; wide characters count two columns', () => {
    expect(plainOf(wrapRow([text('/tmp/relais-demo-abcdef/demo-project/specs/SPEC.md')], 20))).toEqual([
      '/tmp/relais-demo-abc',
      '  def/demo-project/s',
      '  pecs/SPEC.md',
    ]);
    const wide = wrapRow([text('漢字漢字漢字漢字漢字漢字')], 10);
    for (const r of wide) expect(rowWidth(r)).toBeLessThanOrEqual(10);
    expect(plainOf(wide).join('').replace(/ /g, '')).toBe('漢字漢字漢字漢字漢字漢字');
  });

  test('a row that fits comes back as it is, a spinner included', () => {
    const row = [spinner('accent'), text(' running')];
    expect(wrapRow(row, 40)).toEqual([row]);
  });
});
