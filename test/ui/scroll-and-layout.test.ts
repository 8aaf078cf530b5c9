import { describe, expect, test } from 'vitest';
import { allocate } from '../../source/ui/layout/allocate.js';
import { screenLayout } from '../../source/ui/layout/screen-layout.js';
import { outputWindow, scrollAnchor } from '../../source/ui/store/scroll.js';
import { initialUiState } from '../../source/ui/store/ui-state.js';
import { T0 } from './helpers.js';

describe('output scrolling', () => {
  test('following shows the newest lines', () => {
    expect(outputWindow(0, 99, null, 10)).toEqual({
      fromSeq: 90,
      toSeq: 99,
      above: 90,
      below: 0,
      following: true,
      topRowsHidden: 0,
      bottomRowsHidden: 0,
    });
  });

  test('page up keeps one line of context; page down back to the end follows again', () => {
    const up = scrollAnchor(null, 'page_up', 0, 99, 10);
    expect(up).toEqual({ seq: 90, below: 0 });
    expect(outputWindow(0, 99, up, 10)).toMatchObject({ fromSeq: 81, toSeq: 90, below: 9, following: false });
    expect(scrollAnchor(up, 'page_down', 0, 99, 10)).toBeNull();
  });

  test('an anchored view stays on its lines while new ones arrive', () => {
    const anchor = scrollAnchor(null, 'line_up', 0, 99, 10);
    expect(outputWindow(0, 150, anchor, 10)).toMatchObject({ fromSeq: 89, toSeq: 98, below: 52 });
  });

  test('home shows the oldest kept page; the view never goes above the oldest line', () => {
    const top = scrollAnchor(null, 'top', 40, 99, 10);
    expect(outputWindow(40, 99, top, 10)).toMatchObject({ fromSeq: 40, toSeq: 49, above: 0 });
    expect(scrollAnchor(top, 'page_up', 40, 99, 10)).toEqual({ seq: 49, below: 0 });
    // Lines dropped under an anchor: the view clamps to what is kept.
    expect(outputWindow(60, 120, top, 10)).toMatchObject({ fromSeq: 60, toSeq: 69 });
  });

  test('fewer lines than rows: nothing to scroll', () => {
    expect(scrollAnchor(null, 'page_up', 0, 3, 10)).toBeNull();
    expect(outputWindow(0, 3, null, 10)).toMatchObject({ fromSeq: 0, toSeq: 3, above: 0 });
  });

  // Issue 16 item 4: long lines wrap, so a line may take several rows; a page moves by rows.
  const tall = (seq: number) => (seq % 10 === 0 ? 4 : 1); // every tenth line wraps to 4 rows

  test('wrapped lines: the window holds rows, not lines, and cuts a tall top line from its top', () => {
    // Lines 90..99 take 13 rows: 91..99 fill 9, line 90 shows its last row only.
    expect(outputWindow(0, 99, null, 10, tall)).toMatchObject({ fromSeq: 90, toSeq: 99, topRowsHidden: 3 });
    expect(outputWindow(0, 99, null, 12, tall)).toMatchObject({ fromSeq: 90, topRowsHidden: 1 });
  });

  test('wrapped lines: a row at a time, every row of every line comes on screen, and back', () => {
    const rowsShown = (anchor: ReturnType<typeof scrollAnchor>) => {
      const w = outputWindow(0, 99, anchor, 3, tall);
      return `${w.fromSeq}/${w.topRowsHidden}..${w.toSeq}/${w.bottomRowsHidden}`;
    };
    const seen = new Set<string>();
    let anchor: ReturnType<typeof scrollAnchor> = null;
    // 130 rows in all: from the newest, 127 steps up reach the first page.
    for (let step = 0; step < 127; step++) {
      seen.add(rowsShown(anchor));
      anchor = scrollAnchor(anchor, 'line_up', 0, 99, 3, tall);
    }
    seen.add(rowsShown(anchor));
    expect(outputWindow(0, 99, anchor, 3, tall)).toMatchObject({ fromSeq: 0, topRowsHidden: 0 });
    expect(seen.size).toBe(128); // each step showed a new row
    expect(scrollAnchor(anchor, 'line_up', 0, 99, 3, tall)).toEqual(anchor);
    for (let step = 0; step < 127; step++) anchor = scrollAnchor(anchor, 'line_down', 0, 99, 3, tall);
    expect(anchor).toBeNull();
  });

  test('wrapped lines: page up and down never skip a row, and come back to following', () => {
    const seen = new Set<number>();
    let anchor: ReturnType<typeof scrollAnchor> = null;
    for (let page = 0; page < 40; page++) {
      const window = outputWindow(0, 99, anchor, 8, tall);
      for (let seq = window.fromSeq; seq <= window.toSeq; seq++) seen.add(seq);
      if (window.above === 0 && window.topRowsHidden === 0) break;
      anchor = scrollAnchor(anchor, 'page_up', 0, 99, 8, tall);
    }
    expect(seen.size).toBe(100);
    for (let page = 0; page < 40 && anchor !== null; page++)
      anchor = scrollAnchor(anchor, 'page_down', 0, 99, 8, tall);
    expect(anchor).toBeNull();
    // Home: the first page starts at the oldest line's first row (line 0 alone takes 4).
    const top = scrollAnchor(null, 'top', 0, 99, 8, tall);
    expect(outputWindow(0, 99, top, 8, tall)).toMatchObject({ fromSeq: 0, toSeq: 4, topRowsHidden: 0 });
    // A line taller than the view: Home shows its first rows, the rest below.
    const huge = () => 20;
    const first = scrollAnchor(null, 'top', 0, 5, 8, huge);
    expect(outputWindow(0, 5, first, 8, huge)).toMatchObject({ fromSeq: 0, toSeq: 0, bottomRowsHidden: 12 });
  });
});

describe('panel heights', () => {
  test('allocate always fills the column exactly, by priority', () => {
    const slots = [
      { id: 'a', min: 3, want: 8, priority: 2 },
      { id: 'out', min: 5, want: 0, priority: 1, grow: true },
      { id: 'b', min: 3, want: 6, priority: 3 },
      { id: 'c', min: 3, want: 4, priority: 4 },
    ] as const;
    for (const available of [5, 8, 11, 14, 20, 40, 100]) {
      const placed = allocate(slots, available);
      expect(placed.reduce((sum, p) => sum + p.height, 0)).toBe(available);
      for (const p of placed) expect(p.height).toBeGreaterThanOrEqual(3);
    }
    expect(allocate(slots, 13)).toEqual([
      { id: 'a', height: 8 },
      { id: 'out', height: 5 },
    ]);
    expect(allocate(slots, 40).find((p) => p.id === 'out')?.height).toBe(40 - 8 - 6 - 4);
  });

  test('the screen is one row shorter than the terminal at every size', () => {
    for (const view of ['workflow', 'loop'] as const) {
      const state = initialUiState(view, 'demo', T0);
      for (const [columns, rows] of [
        [40, 10],
        [80, 24],
        [99, 40],
        [100, 30],
        [200, 60],
      ] as const) {
        const layout = screenLayout(state, columns, rows);
        if (layout.kind !== 'panels') throw new Error(`expected panels at ${columns}x${rows}`);
        for (const column of layout.stack) {
          expect(column.panels.reduce((sum, p) => sum + p.height, 0)).toBe(rows - 3);
        }
        expect(layout.stack.reduce((sum, c) => sum + c.width, 0)).toBe(columns);
        expect(layout.outputRows).toBeGreaterThanOrEqual(3);
      }
    }
  });

  test('narrow terminals stack one column; tiny ones get a message', () => {
    const state = initialUiState('workflow', 'demo', T0);
    const narrow = screenLayout(state, 80, 24);
    expect(narrow.kind === 'panels' && narrow.stack.map((c) => c.name)).toEqual(['single']);
    const wide = screenLayout(state, 120, 40);
    expect(wide.kind === 'panels' && wide.stack.map((c) => c.name)).toEqual(['left', 'right']);
    expect(screenLayout(state, 30, 24).kind).toBe('too_small');
    expect(screenLayout(state, 80, 6).kind).toBe('too_small');
  });
});
