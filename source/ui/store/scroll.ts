/**
 * Scrolling through the kept output. The position is the seq of the bottom visible line, or null
 * to follow the newest line: anchored to a seq, the view stays put while new lines arrive.
 */

export type ScrollCommand = 'line_up' | 'line_down' | 'page_up' | 'page_down' | 'top' | 'bottom';

export interface OutputWindow {
  readonly fromSeq: number;
  readonly toSeq: number;
  /** Kept lines above the window. */
  readonly above: number;
  /** Newer lines below the window (0 when following). */
  readonly below: number;
  readonly following: boolean;
}

export function outputWindow(
  firstSeq: number,
  lastSeq: number,
  anchor: number | null,
  height: number,
): OutputWindow {
  const rows = Math.max(1, height);
  if (lastSeq < firstSeq) return { fromSeq: firstSeq, toSeq: lastSeq, above: 0, below: 0, following: true };
  const bottom = bottomOf(firstSeq, lastSeq, anchor, rows);
  const top = Math.max(firstSeq, bottom - rows + 1);
  return {
    fromSeq: top,
    toSeq: bottom,
    above: top - firstSeq,
    below: lastSeq - bottom,
    following: bottom === lastSeq,
  };
}

export function scrollAnchor(
  anchor: number | null,
  command: ScrollCommand,
  firstSeq: number,
  lastSeq: number,
  height: number,
): number | null {
  const rows = Math.max(1, height);
  if (lastSeq < firstSeq || command === 'bottom') return null;
  const bottom = bottomOf(firstSeq, lastSeq, anchor, rows);
  const page = Math.max(1, rows - 1); // a page keeps one line of context
  const moved = {
    line_up: bottom - 1,
    line_down: bottom + 1,
    page_up: bottom - page,
    page_down: bottom + page,
    top: firstSeq + rows - 1,
  }[command];
  const bottomLine = Math.max(moved, lowestBottom(firstSeq, lastSeq, rows));
  // Nothing above to show: keep following rather than freezing the view on the last line.
  return bottomLine >= lastSeq ? null : bottomLine;
}

function bottomOf(firstSeq: number, lastSeq: number, anchor: number | null, rows: number): number {
  if (anchor === null) return lastSeq;
  return Math.min(lastSeq, Math.max(anchor, lowestBottom(firstSeq, lastSeq, rows)));
}

/** The bottom line of the first full page (a window never shows empty rows above the oldest line). */
function lowestBottom(firstSeq: number, lastSeq: number, rows: number): number {
  return Math.min(lastSeq, firstSeq + rows - 1);
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
