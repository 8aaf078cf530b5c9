import { widthOf } from '../format/text.js';
import type { Tone } from '../theme.js';

/**
 * A panel's content as data: rows of styled segments. Panels build rows with pure functions
 * (testable, and the layout counts them to size the panel); `<RowLine>` draws one row.
 */
export type Segment =
  | {
      readonly text: string;
      readonly tone?: Tone;
      readonly bold?: boolean;
      readonly dim?: boolean;
      readonly inverse?: boolean;
    }
  | { readonly spinner: true; readonly tone?: Tone };

export type Row = readonly Segment[];

export const text = (
  value: string,
  style: Omit<Extract<Segment, { text: string }>, 'text'> = {},
): Segment => ({
  text: value,
  ...style,
});

/** An empty row (a Text of '' would take no line at all). */
export const BLANK: Row = [{ text: ' ' }];

export const spinner = (tone?: Tone): Segment => (tone ? { spinner: true, tone } : { spinner: true });

/** Rows cut to `height`, the last one replaced by "… N more" when something was cut. */
export function clipRows(rows: readonly Row[], height: number, what = 'more'): Row[] {
  if (height <= 0) return [];
  if (rows.length <= height) return [...rows];
  // One row is better spent on content than on "… N more".
  if (height === 1) return rows.slice(0, 1);
  const hidden = rows.length - height + 1;
  return [...rows.slice(0, height - 1), [text(`… ${hidden} ${what}`, { dim: true })]];
}

/** The last `height` rows, the first one replaced by "… N earlier" when something was cut. */
export function clipRowsTail(rows: readonly Row[], height: number, what = 'earlier'): Row[] {
  if (height <= 0) return [];
  if (rows.length <= height) return [...rows];
  if (height === 1) return rows.slice(-1);
  const hidden = rows.length - height + 1;
  return [[text(`… ${hidden} ${what}`, { dim: true })], ...rows.slice(rows.length - height + 1)];
}

/** A row's width in terminal columns (a spinner takes one). */
export function rowWidth(row: Row): number {
  let sum = 0;
  for (const segment of row) sum += 'text' in segment ? widthOf(segment.text) : 1;
  return sum;
}

/** One styled cell of a row being wrapped: a character (or a spinner) and the segment it came from. */
interface Cell {
  readonly char: string;
  readonly width: number;
  readonly segment: number;
}

/**
 * A row cut into rows of at most `width` columns, styles kept, nothing dropped (issue 16 item 4:
 * an error and its `Fix:` line are read whole, never cut at the panel's edge). It breaks after the
 * last space that fits, else mid-word; continuation rows start with `indent` spaces so a wrapped
 * line reads as one. A row that fits comes back as it is.
 */
export function wrapRow(row: Row, width: number, indent = 2): Row[] {
  if (width <= 0) return [row];
  if (rowWidth(row) <= width) return [row];
  const pad = width > indent * 4 ? indent : 0;
  const cells = cellsOf(row);
  const lines: Cell[][] = [];
  let start = 0;
  while (start < cells.length) {
    const room = lines.length === 0 ? width : width - pad;
    const end = breakAt(cells, start, room);
    lines.push(cells.slice(start, end));
    start = end;
    // A continuation row never starts with the space it broke at.
    while (start < cells.length && cells[start]?.char === ' ') start++;
  }
  return lines.map((line, index) => rowOf(row, line, index === 0 ? '' : ' '.repeat(pad)));
}

function cellsOf(row: Row): Cell[] {
  const cells: Cell[] = [];
  row.forEach((segment, index) => {
    if (!('text' in segment)) {
      cells.push({ char: '', width: 1, segment: index });
      return;
    }
    const narrow = /^[\x20-\x7e]*$/.test(segment.text);
    for (const char of segment.text) cells.push({ char, width: narrow ? 1 : widthOf(char), segment: index });
  });
  return cells;
}

/** The end (exclusive) of the row that starts at `start` and fits `room` columns. */
function breakAt(cells: readonly Cell[], start: number, room: number): number {
  let used = 0;
  let end = start;
  while (end < cells.length && used + (cells[end]?.width ?? 0) <= Math.max(1, room)) {
    used += cells[end]?.width ?? 0;
    end++;
  }
  if (end === start) return start + 1; // a cell wider than the room still moves on
  if (end >= cells.length) return end;
  // Break after the last space that fits (a word is not cut), unless the row would be mostly empty.
  for (let i = end; i > start + Math.floor(room / 3); i--) if (cells[i - 1]?.char === ' ') return i;
  return end;
}

function rowOf(source: Row, cells: readonly Cell[], lead: string): Row {
  const out: Segment[] = lead ? [{ text: lead }] : [];
  let current = -1;
  let buffer = '';
  const close = () => {
    if (current < 0) return;
    const segment = source[current];
    if (segment && 'text' in segment) out.push({ ...segment, text: buffer });
    else if (segment) out.push(segment);
  };
  for (const cell of cells) {
    if (cell.segment !== current) {
      close();
      current = cell.segment;
      buffer = '';
    }
    buffer += cell.char;
  }
  close();
  return out;
}

/** Rows of `rows`, each wrapped to `width` (see wrapRow). */
export function wrapRows(rows: readonly Row[], width: number, indent = 2): Row[] {
  return rows.flatMap((row) => wrapRow(row, width, indent));
}
