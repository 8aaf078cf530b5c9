import type { Verdict } from '../../engine/protocol/codes.js';
import { Frame, innerHeight, innerWidth } from '../components/Frame.js';
import { Rows } from '../components/RowLine.js';
import { clipRows, type Row, text } from '../components/row.js';
import { flatten, wrapText } from '../format/text.js';
import type { UiState } from '../store/ui-state.js';
import { verdictGlyph } from './TickTimeline.js';

/** Verdict counts of the loop so far, and the last tick's outcome with what to do about it. */
export function verdictRows(state: UiState, width: number): Row[] {
  const counts: Record<Verdict, number> = { success: 0, stop: 0, blocked: 0 };
  for (const tick of state.ticks) counts[tick.verdict]++;
  const rows: Row[] = [
    (['success', 'stop', 'blocked'] as const).flatMap((verdict) => [
      verdictGlyph(verdict),
      text(` ${counts[verdict]} ${verdict}   `, { dim: counts[verdict] === 0 }),
    ]),
  ];
  const last = state.lastTick;
  if (last) {
    rows.push([verdictGlyph(last.verdict), text(' last: ', { dim: true }), text(last.code, { bold: true })]);
    if (last.detail) rows.push([text(flatten(last.detail, 300), { dim: true })]);
    if (last.verdict !== 'success') {
      // Whole: a fix cut after three lines is a fix nobody can follow (issue 16 item 4).
      for (const line of wrapText(`Fix: ${last.remediation}`, width, 20))
        rows.push([text(line, { tone: 'warn' })]);
    }
    if (last.reportPath) rows.push([text('report: ', { dim: true }), text(flatten(last.reportPath, 300))]);
  }
  return rows;
}

/** One row (a compact panel at 80×24): the counts, then the last code. */
export function compactVerdictRow(state: UiState): Row {
  const counts: Record<Verdict, number> = { success: 0, stop: 0, blocked: 0 };
  for (const tick of state.ticks) counts[tick.verdict]++;
  const last = state.lastTick;
  return [
    ...(['success', 'stop', 'blocked'] as const).flatMap((verdict) => [
      verdictGlyph(verdict),
      text(`${counts[verdict]} `, { dim: counts[verdict] === 0 }),
    ]),
    ...(last ? [text('· last ', { dim: true }), text(last.code, { bold: true })] : []),
  ];
}

export function Verdicts(props: {
  readonly state: UiState;
  readonly width: number;
  readonly height: number;
}) {
  const rows =
    innerHeight(props.height) <= 1
      ? [compactVerdictRow(props.state)]
      : verdictRows(props.state, innerWidth(props.width));
  return (
    <Frame title="Verdicts" width={props.width} height={props.height}>
      <Rows rows={clipRows(rows, innerHeight(props.height))} />
    </Frame>
  );
}
