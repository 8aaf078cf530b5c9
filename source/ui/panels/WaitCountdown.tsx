import { Frame, innerHeight } from '../components/Frame.js';
import { Rows } from '../components/RowLine.js';
import { clipRows, type Row, text } from '../components/row.js';
import { duration, timeOfDay } from '../format/time.js';
import type { UiState, WaitModel } from '../store/ui-state.js';
import { GLYPH } from '../theme.js';

/** A usage-limit wait: the run resumes the same step by itself at `until`; this counts down to it. */
export function waitRows(wait: WaitModel, nowMs: number): Row[] {
  const left = wait.untilMs - nowMs;
  return [
    left > 0
      ? [
          text(`${GLYPH.waiting} resumes in `, { tone: 'warn' }),
          text(duration(left), { bold: true, tone: 'warn' }),
          text(` (at ${timeOfDay(wait.untilMs)})`, { dim: true }),
        ]
      : [text(`${GLYPH.waiting} resuming…`, { tone: 'warn' })],
    [text(wait.reason, { dim: true })],
  ];
}

export function WaitCountdown(props: {
  readonly state: UiState;
  readonly width: number;
  readonly height: number;
}) {
  const wait = props.state.wait;
  if (!wait) return null;
  return (
    <Frame title="Usage limit" width={props.width} height={props.height} tone="warn">
      <Rows rows={clipRows(waitRows(wait, props.state.nowMs), innerHeight(props.height))} />
    </Frame>
  );
}
