/**
 * Scrolling through the kept output. The position is the bottom visible row, or null to follow
 * the newest line: anchored to a line (its seq) and how many of its rows are below the view, the
 * view stays put while new lines arrive. A long line wraps to several rows (issue 16 item 4), so
 * the view moves by rows: every row of every kept line can be brought on screen.
 */

export type ScrollCommand = 'line_up' | 'line_down' | 'page_up' | 'page_down' | 'top' | 'bottom';

/** The bottom row shown: line `seq`, with `below` of its rows under the view. */
export interface ScrollPosition {
  readonly seq: number;
  readonly below: number;
}

export interface OutputWindow {
  readonly fromSeq: number;
  readonly toSeq: number;
  /** Kept lines above the window. */
  readonly above: number;
  /** Newer lines below the window (0 when following). */
  readonly below: number;
  readonly following: boolean;
  /** Rows of the top line hidden above the window (a wrapped line taller than what is left). */
  readonly topRowsHidden: number;
  /** Rows of the bottom line hidden below the window. */
  readonly bottomRowsHidden: number;
}

/**
 * How many rows a kept line takes on screen (a long line wraps); one each when the caller does not
 * say. Every line takes at least one.
 */
export type LineRows = (seq: number) => number;

const ONE_ROW: LineRows = () => 1;

export function outputWindow(
  firstSeq: number,
  lastSeq: number,
  anchor: ScrollPosition | null,
  height: number,
  rowsOf: LineRows = ONE_ROW,
): OutputWindow {
  const rows = Math.max(1, height);
  if (lastSeq < firstSeq)
    return {
      fromSeq: firstSeq,
      toSeq: lastSeq,
      above: 0,
      below: 0,
      following: true,
      topRowsHidden: 0,
      bottomRowsHidden: 0,
    };
  const bottom = clamp(anchor, firstSeq, lastSeq, rows, rowsOf);
  let top = bottom.seq;
  let used = lineRows(rowsOf, top) - bottom.below;
  while (used < rows && top > firstSeq) {
    top--;
    used += lineRows(rowsOf, top);
  }
  const topRowsHidden = Math.max(0, used - rows);
  return {
    fromSeq: top,
    toSeq: bottom.seq,
    // A line partly out of view counts as out of view: there is more of it to scroll to.
    above: top - firstSeq + (topRowsHidden > 0 ? 1 : 0),
    below: lastSeq - bottom.seq + (bottom.below > 0 ? 1 : 0),
    following: bottom.seq === lastSeq && bottom.below === 0,
    topRowsHidden,
    bottomRowsHidden: bottom.below,
  };
}

export function scrollAnchor(
  anchor: ScrollPosition | null,
  command: ScrollCommand,
  firstSeq: number,
  lastSeq: number,
  height: number,
  rowsOf: LineRows = ONE_ROW,
): ScrollPosition | null {
  const rows = Math.max(1, height);
  if (lastSeq < firstSeq || command === 'bottom') return null;
  const bottom = clamp(anchor, firstSeq, lastSeq, rows, rowsOf);
  const page = Math.max(1, rows - 1); // a page keeps one row of context
  const range = { firstSeq, lastSeq, rowsOf };
  const moved = {
    line_up: () => moveRows(bottom, -1, range),
    line_down: () => moveRows(bottom, 1, range),
    page_up: () => moveRows(bottom, -page, range),
    page_down: () => moveRows(bottom, page, range),
    top: () => firstPage(firstSeq, lastSeq, rows, rowsOf),
  }[command]();
  const next = clamp(moved, firstSeq, lastSeq, rows, rowsOf);
  // Nothing below to show: keep following rather than freezing the view on the last row.
  return next.seq >= lastSeq && next.below === 0 ? null : next;
}

function lineRows(rowsOf: LineRows, seq: number): number {
  return Math.max(1, rowsOf(seq));
}

interface Range {
  readonly firstSeq: number;
  readonly lastSeq: number;
  readonly rowsOf: LineRows;
}

/** The position `delta` rows down (up when negative), stopped at the first and the last row. */
function moveRows(from: ScrollPosition, delta: number, { firstSeq, lastSeq, rowsOf }: Range): ScrollPosition {
  let seq = from.seq;
  // Rows counted from the top of line `seq`: its bottom row shown is rows - 1 - below.
  let row = lineRows(rowsOf, seq) - 1 - from.below + delta;
  while (row < 0 && seq > firstSeq) {
    seq--;
    row += lineRows(rowsOf, seq);
  }
  while (row >= lineRows(rowsOf, seq) && seq < lastSeq) {
    row -= lineRows(rowsOf, seq);
    seq++;
  }
  const height = lineRows(rowsOf, seq);
  const clamped = Math.max(0, Math.min(height - 1, row));
  return { seq, below: height - 1 - clamped };
}

/** The bottom row of the first full page (a view never shows empty rows above the oldest line). */
function firstPage(firstSeq: number, lastSeq: number, rows: number, rowsOf: LineRows): ScrollPosition {
  return moveRows({ seq: firstSeq, below: lineRows(rowsOf, firstSeq) - 1 }, rows - 1, {
    firstSeq,
    lastSeq,
    rowsOf,
  });
}

/** `anchor` kept between the first page and the newest row (null: the newest row). */
function clamp(
  anchor: ScrollPosition | null,
  firstSeq: number,
  lastSeq: number,
  rows: number,
  rowsOf: LineRows,
): ScrollPosition {
  if (anchor === null || anchor.seq > lastSeq) return { seq: lastSeq, below: 0 };
  const lowest = firstPage(firstSeq, lastSeq, rows, rowsOf);
  // Lines dropped under the anchor: the view clamps to what is kept.
  if (anchor.seq < firstSeq) return lowest;
  const at = { seq: anchor.seq, below: Math.min(anchor.below, lineRows(rowsOf, anchor.seq) - 1) };
  return isAbove(at, lowest) ? lowest : at;
}

/** Whether `a` is a row above `b`. */
function isAbove(a: ScrollPosition, b: ScrollPosition): boolean {
  return a.seq < b.seq || (a.seq === b.seq && a.below > b.below);
}

/** A fixed text's first shown row after `command` (the document viewer); the caller clamps it. */
export function scrolledTop(top: number, command: ScrollCommand, height: number, total: number): number {
  const page = Math.max(1, height - 1); // a page keeps one line of context
  const moved = {
    line_up: top - 1,
    line_down: top + 1,
    page_up: top - page,
    page_down: top + page,
    top: 0,
    bottom: total,
  }[command];
  return Math.max(0, moved);
}
