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
