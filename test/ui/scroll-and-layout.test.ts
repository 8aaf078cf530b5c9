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
    });
  });

  test('page up keeps one line of context; page down back to the end follows again', () => {
    const up = scrollAnchor(null, 'page_up', 0, 99, 10);
    expect(up).toBe(90);
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
    expect(scrollAnchor(top, 'page_up', 40, 99, 10)).toBe(49);
    // Lines dropped under an anchor: the view clamps to what is kept.
    expect(outputWindow(60, 120, top, 10)).toMatchObject({ fromSeq: 60, toSeq: 69 });
  });

  test('fewer lines than rows: nothing to scroll', () => {
    expect(scrollAnchor(null, 'page_up', 0, 3, 10)).toBeNull();
    expect(outputWindow(0, 3, null, 10)).toMatchObject({ fromSeq: 0, toSeq: 3, above: 0 });
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
