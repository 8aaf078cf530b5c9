import type { Verdict } from '../../engine/protocol/codes.js';
import { Frame, innerHeight, innerWidth } from '../components/Frame.js';
import { Rows } from '../components/RowLine.js';
import { clipRowsTail, type Row, type Segment, spinner, text } from '../components/row.js';
import { usd } from '../format/money.js';
import { fitTo, padStartTo } from '../format/text.js';
import { duration } from '../format/time.js';
import { workIsOver } from '../store/selectors.js';
import type { UiState } from '../store/ui-state.js';
import { GLYPH } from '../theme.js';

/** The loop's timeline: one row per finished tick (verdict, code, task, cost), the running one spins. */
export function tickRows(state: UiState, width: number): Row[] {
  const codeWidth = Math.max(8, width - 30);
  const rows: Row[] = state.ticks.map((tick) => [
    verdictGlyph(tick.verdict),
    text(` #${tick.tick} `, { bold: true }),
    text(fitTo(tick.code, codeWidth), {
      tone: tick.verdict === 'success' ? undefined : toneOf(tick.verdict),
    }),
    text(fitTo(` ${tick.taskId ?? ''}`, 9), { dim: true }),
    text(padStartTo(tick.durationMs === null ? '' : duration(tick.durationMs), 7), { dim: true }),
    text(padStartTo(usd(tick.costUsd), 8), { dim: true }),
  ]);
  const running = state.runningTick;
  if (running) {
    rows.push([
      running.verdict
        ? verdictGlyph(running.verdict)
        : workIsOver(state)
          ? text(GLYPH.stopped, { dim: true })
          : spinner('accent'),
      text(` #${running.tick} `, { bold: true }),
      text(running.phase ?? 'starting', { tone: 'accent' }),
      text(`  ${duration(state.nowMs - running.startedAtMs)}`, { dim: true }),
    ]);
  }
  if (rows.length === 0) rows.push([text('no tick yet', { dim: true })]);
  return rows;
}

function toneOf(verdict: Verdict) {
  return verdict === 'success' ? 'ok' : verdict === 'stop' ? 'warn' : 'error';
}

export function verdictGlyph(verdict: Verdict): Segment {
  const glyph = verdict === 'success' ? GLYPH.done : verdict === 'stop' ? GLYPH.failed : GLYPH.rejected;
  return text(glyph, { tone: toneOf(verdict) });
}

export function TickTimeline(props: {
  readonly state: UiState;
  readonly width: number;
  readonly height: number;
}) {
  const rows = clipRowsTail(tickRows(props.state, innerWidth(props.width)), innerHeight(props.height));
  return (
    <Frame title="Ticks" aside={`${props.state.ticks.length} done`} width={props.width} height={props.height}>
      <Rows rows={rows} />
    </Frame>
  );
}
