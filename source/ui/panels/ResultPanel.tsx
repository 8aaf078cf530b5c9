import { Frame, innerHeight, innerWidth } from '../components/Frame.js';
import { Rows } from '../components/RowLine.js';
import { clipRows, type Row, text, wrapRows } from '../components/row.js';
import { flatten } from '../format/text.js';
import type { ResultModel } from '../store/ui-state.js';
import { GLYPH, type Tone } from '../theme.js';

/**
 * How the work ended, as the engine announced it, with what to do next. Every line wraps at
 * `width` (issue 16 item 4: the reason and its `Fix:` are read whole, never cut at the edge).
 */
export function resultRows(result: ResultModel, width = Number.POSITIVE_INFINITY): Row[] {
  const rows: Row[] = [
    [text(`${glyphOf(result)} ${result.headline}`, { bold: true, tone: toneOf(result) })],
    ...result.lines.map((line): Row => [text(flatten(line, 600))]),
  ];
  return Number.isFinite(width) ? wrapRows(rows, width) : rows;
}

/** Done ✓, not all done ◐ (not pushed), failed ✗, or stopped on request ‖ (resumable: neither). */
function glyphOf(result: ResultModel): string {
  if (result.partial) return GLYPH.partial;
  if (result.ok) return GLYPH.done;
  return result.interrupted ? GLYPH.interrupted : GLYPH.failed;
}

function toneOf(result: ResultModel): Tone {
  if (result.partial) return 'warn';
  if (result.ok) return 'ok';
  return result.interrupted ? 'warn' : 'error';
}

export function ResultPanel(props: {
  readonly result: ResultModel;
  readonly width: number;
  readonly height: number;
}) {
  return (
    <Frame title="Result" width={props.width} height={props.height} tone={toneOf(props.result)}>
      <Rows rows={clipRows(resultRows(props.result, innerWidth(props.width)), innerHeight(props.height))} />
    </Frame>
  );
}
