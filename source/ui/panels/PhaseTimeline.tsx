import { Frame, innerHeight, innerWidth } from '../components/Frame.js';
import { Rows } from '../components/RowLine.js';
import { clipRows, type Row, type Segment, spinner, text } from '../components/row.js';
import { fitTo, flatten, padStartTo } from '../format/text.js';
import { duration } from '../format/time.js';
import type { GateNote, PhaseRow, UiState } from '../store/ui-state.js';
import { GLYPH } from '../theme.js';

/**
 * The workflow's phases in seed order, each with its state glyph and duration; the running one
 * spins, and every gate decision shows under the phase it was taken in.
 */
export function phaseRows(state: UiState, width: number): Row[] {
  const nameWidth = Math.max(8, width - 10);
  const rows: Row[] = [];
  for (const phase of state.phases) {
    const label =
      phase.state === 'IMPLEMENTATION' && phase.status === 'running' && state.tickPhase
        ? `${phase.state} · ${state.tickPhase}`
        : phase.state;
    rows.push([
      glyphOf(phase),
      text(' '),
      text(fitTo(label, nameWidth), { dim: phase.status === 'pending', bold: isCurrent(phase) }),
      text(padStartTo(phaseDuration(phase, state.nowMs), 8), { dim: true }),
    ]);
    for (const note of phase.gates) rows.push([text('  └ ', { dim: true }), ...gateNote(note)]);
  }
  const end = state.end;
  if (end) {
    const ok = end.state === 'COMPLETED';
    rows.push([
      text(ok ? GLYPH.done : end.state === 'REJECTED' ? GLYPH.rejected : GLYPH.failed, {
        tone: ok ? 'ok' : 'error',
      }),
      text(' '),
      text(end.state, { bold: true, tone: ok ? 'ok' : 'error' }),
      ...(end.reason ? [text(` · ${end.reason}`, { tone: ok ? undefined : 'error' })] : []),
    ]);
  }
  return rows;
}

const isCurrent = (phase: PhaseRow) => phase.status === 'running' || phase.status === 'waiting';

function glyphOf(phase: PhaseRow): Segment {
  switch (phase.status) {
    case 'running':
      return spinner('accent');
    case 'waiting':
      return text(GLYPH.waiting, { tone: 'gate', bold: true });
    case 'done':
      return text(GLYPH.done, { tone: 'ok' });
    case 'failed':
      return text(GLYPH.failed, { tone: 'error' });
    case 'rejected':
      return text(GLYPH.rejected, { tone: 'error' });
    default:
      return text(GLYPH.pending, { dim: true });
  }
}

function phaseDuration(phase: PhaseRow, nowMs: number): string {
  if (phase.startedAtMs === null) return '';
  return duration((phase.endedAtMs ?? nowMs) - phase.startedAtMs);
}

function gateNote(note: GateNote): Segment[] {
  const by = note.by === 'human' ? '' : ` (${note.by})`;
  if (note.decision === 'approve') return [text(`${note.gate} approved${by}`, { tone: 'ok' })];
  if (note.decision === 'reject') return [text(`${note.gate} rejected${by}`, { tone: 'error' })];
  return [
    text(`${note.gate} answered${by}`, { tone: 'info' }),
    text(`: ${flatten(note.answer ?? '', 200)}`, { dim: true }),
  ];
}

export function PhaseTimeline(props: {
  readonly state: UiState;
  readonly width: number;
  readonly height: number;
}) {
  const done = props.state.phases.filter((p) => p.status === 'done').length;
  const rows = clipRows(phaseRows(props.state, innerWidth(props.width)), innerHeight(props.height));
  return (
    <Frame
      title="Phases"
      aside={`${done}/${props.state.phases.length}`}
      width={props.width}
      height={props.height}
    >
      <Rows rows={rows} />
    </Frame>
  );
}
