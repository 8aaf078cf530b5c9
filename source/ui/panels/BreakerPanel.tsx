import { Frame, innerHeight } from '../components/Frame.js';
import { Rows } from '../components/RowLine.js';
import { clipRows, type Row, type Segment, text } from '../components/row.js';
import { ago } from '../format/time.js';
import type { UiState } from '../store/ui-state.js';
import { GLYPH } from '../theme.js';

/**
 * The circuit breaker that supervises the agent: its state, attempts, the last trigger with its
 * threshold, and how long the agent has been silent (what the inactivity trigger watches).
 */
export function breakerRows(state: UiState): Row[] {
  const breaker = state.breaker;
  const rows: Row[] = [];
  if (!breaker) {
    rows.push([
      text('● ', { tone: 'ok' }),
      text('closed', { bold: true }),
      text(' · no trip so far', { dim: true }),
    ]);
  } else {
    const s = breaker.snapshot;
    rows.push([
      ...stateSegments(s.state),
      text(` · attempts ${s.attempts}/${s.max_attempts}`, { tone: s.attempts > 0 ? 'warn' : undefined }),
    ]);
    const why = breaker.detail ?? breaker.trigger ?? s.last_trigger;
    if (why) rows.push([text('last trigger: ', { dim: true }), text(why, { tone: 'warn' })]);
  }
  if (state.retry) {
    rows.push([
      text(`↻ API retry ${state.retry.attempt}/${state.retry.max} (${state.retry.error})`, { tone: 'warn' }),
    ]);
  }
  const { lastOutputAtMs, lastActivityAtMs } = state.activity;
  if (lastOutputAtMs !== null || lastActivityAtMs !== null) {
    rows.push([
      text('output ', { dim: true }),
      text(lastOutputAtMs === null ? 'none yet' : ago(lastOutputAtMs, state.nowMs)),
      text(' · activity ', { dim: true }),
      text(lastActivityAtMs === null ? 'none yet' : ago(lastActivityAtMs, state.nowMs)),
    ]);
  }
  return rows;
}

function stateSegments(breakerState: 'closed' | 'half_open' | 'open' | 'paused'): Segment[] {
  switch (breakerState) {
    case 'closed':
      return [text('● ', { tone: 'ok' }), text('closed', { bold: true })];
    case 'half_open':
      return [text(`${GLYPH.claimed} `, { tone: 'warn' }), text('half-open', { bold: true, tone: 'warn' })];
    case 'open':
      return [text('● ', { tone: 'error' }), text('OPEN', { bold: true, tone: 'error' })];
    default:
      return [
        text(`${GLYPH.waiting} `, { tone: 'info' }),
        text('paused (waiting for a human)', { tone: 'info' }),
      ];
  }
}

export function BreakerPanel(props: {
  readonly state: UiState;
  readonly width: number;
  readonly height: number;
}) {
  const open = props.state.breaker?.snapshot.state === 'open';
  return (
    <Frame
      title="Circuit breaker"
      width={props.width}
      height={props.height}
      tone={open ? 'error' : undefined}
    >
      <Rows rows={clipRows(breakerRows(props.state), innerHeight(props.height))} />
    </Frame>
  );
}
