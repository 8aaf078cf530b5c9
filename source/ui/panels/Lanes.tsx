import type { BreakerSnapshot } from '../../engine/protocol/workflow.js';
import { Frame, innerHeight } from '../components/Frame.js';
import { Rows } from '../components/RowLine.js';
import { clipRows, type Row, type Segment, text } from '../components/row.js';
import { usd } from '../format/money.js';
import { stopwatch } from '../format/time.js';
import { type LaneRow, runningLanes } from '../store/reduce-lanes.js';
import type { UiState } from '../store/ui-state.js';
import type { Tone } from '../theme.js';

/**
 * Issue 19's Lanes panel: one row per parallel lane (task, phase, agent and tick step, elapsed,
 * cost, its own breaker), its last line under it, and the merge queue's state. Shown only when
 * lanes run.
 */
export function laneRows(state: UiState): Row[] {
  const rows: Row[] = [];
  for (const lane of state.lanes.rows) {
    const elapsed = stopwatch((lane.endedAtMs ?? state.nowMs) - lane.startedAtMs);
    // The lane whose output the Output panel shows (Tab) is marked.
    const shown = state.interaction.outputLane === lane.lane;
    rows.push([
      ...(shown ? [text('▸ ', { tone: 'accent', bold: true })] : []),
      text(`${lane.lane} `, { bold: true }),
      text(phaseLabel(lane), { tone: toneOf(lane) }),
      text(` · task ${lane.task} ${lane.title}`),
      text(` · ${elapsed} · ${usd(lane.costUsd)}`, { dim: true }),
      ...breakerSegments(lane.breaker),
    ]);
    const last = lane.detail && lane.endedAtMs !== null ? lane.detail : lane.lastLine;
    if (last) rows.push([text(`  ${last}`, { dim: true })]);
  }
  const merge = state.lanes.merge;
  if (merge) {
    rows.push([
      text('merge queue: ', { dim: true }),
      text(`${merge.lane} ${merge.step.replace('_', ' ')}`, {
        tone:
          merge.step === 'landed'
            ? 'ok'
            : merge.step === 'conflict' || merge.step === 'check_failed'
              ? 'error'
              : 'info',
      }),
      text(merge.waiting.length > 0 ? ` · waiting: ${merge.waiting.join(', ')}` : '', { dim: true }),
    ]);
  }
  return rows;
}

function phaseLabel(lane: LaneRow): string {
  if (lane.phase !== 'ticking' && lane.phase !== 'started') return lane.phase;
  const step = [lane.agent, lane.tickPhase?.toLowerCase()].filter(Boolean).join(' ');
  return step ? `${lane.phase} (${step})` : lane.phase;
}

function toneOf(lane: LaneRow): Tone | undefined {
  if (lane.phase === 'landed') return 'ok';
  if (lane.phase === 'kept' || lane.phase === 'failed') return 'error';
  if (lane.phase === 'retrying' || lane.phase === 'waiting' || lane.phase === 'paused') return 'warn';
  return 'info';
}

/** The lane's own circuit breaker (one per lane): its state and attempts, once it reported. */
function breakerSegments(breaker: BreakerSnapshot | null): Segment[] {
  if (!breaker) return [];
  const attempts = `${breaker.attempts}/${breaker.max_attempts}`;
  const [word, tone]: [string, Tone | undefined] =
    breaker.state === 'open'
      ? ['OPEN', 'error']
      : breaker.state === 'half_open'
        ? ['half-open', 'warn']
        : breaker.state === 'paused'
          ? ['paused', 'info']
          : ['closed', undefined];
  return [text(' · breaker ', { dim: true }), text(`${word} ${attempts}`, { tone, dim: tone === undefined })];
}

export function Lanes(props: { readonly state: UiState; readonly width: number; readonly height: number }) {
  const running = runningLanes(props.state);
  return (
    <Frame title="Lanes" aside={`${running} running`} width={props.width} height={props.height}>
      <Rows rows={clipRows(laneRows(props.state), innerHeight(props.height))} />
    </Frame>
  );
}
