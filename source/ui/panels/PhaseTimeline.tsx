import { Frame, innerHeight, innerWidth } from '../components/Frame.js';
import { Rows } from '../components/RowLine.js';
import { clipRows, type Row, type Segment, spinner, text } from '../components/row.js';
import { fitTo, flatten, padStartTo } from '../format/text.js';
import { duration } from '../format/time.js';
import type { GateNote, PhaseRow, UiState } from '../store/ui-state.js';
import { GLYPH } from '../theme.js';

/**
 * The workflow's phases in seed order, each with its state glyph and duration; the running one
 * spins, and every gate decision shows under the phase it was taken in. Within `height` rows the
 * phases and the end always show: the oldest gate notes go first (a planner's many rounds must
 * not push the later phases off the panel).
 */
export function phaseRows(state: UiState, width: number, height = Number.POSITIVE_INFINITY): Row[] {
  const nameWidth = Math.max(8, width - 10);
  const end = endRow(state);
  const fixed = state.phases.length + (end ? 1 : 0);
  const notes = state.phases.reduce((n, phase) => n + phase.gates.length, 0);
  if (fixed > height)
    return clipRows(
      [...state.phases.map((p) => phaseRow(p, state, nameWidth)), ...(end ? [end] : [])],
      height,
    );
  const room = height - fixed;
  // One row says how many were left out, when some are.
  const hidden = notes <= room ? 0 : room === 0 ? notes : notes - (room - 1);
  const rows: Row[] = [];
  let index = 0;
  for (const phase of state.phases) {
    rows.push(phaseRow(phase, state, nameWidth));
    for (const note of phase.gates) {
      if (index >= hidden) rows.push([text('  └ ', { dim: true }), ...gateNote(note)]);
      else if (index === hidden - 1 && room > 0)
        rows.push([text(`  └ … ${hidden} earlier notes`, { dim: true })]);
      index++;
    }
  }
  if (end) rows.push(end);
  return rows;
}

function phaseRow(phase: PhaseRow, state: UiState, nameWidth: number): Row {
  const label =
    phase.state === 'IMPLEMENTATION' && phase.status === 'running' && state.tickPhase
      ? `${phase.state} · ${state.tickPhase}`
      : phase.state;
  return [
    glyphOf(phase),
    text(' '),
    text(fitTo(label, nameWidth), { dim: phase.status === 'pending', bold: isCurrent(phase) }),
    text(padStartTo(phaseDuration(phase, state.nowMs), 8), { dim: true }),
  ];
}

function endRow(state: UiState): Row | null {
  const end = state.end;
  if (!end) return null;
  const ok = end.state === 'COMPLETED';
  return [
    text(ok ? GLYPH.done : end.state === 'REJECTED' ? GLYPH.rejected : GLYPH.failed, {
      tone: ok ? 'ok' : 'error',
    }),
    text(' '),
    text(end.state, { bold: true, tone: ok ? 'ok' : 'error' }),
    ...(end.reason ? [text(` · ${end.reason}`, { tone: ok ? undefined : 'error' })] : []),
  ];
}

const isCurrent = (phase: PhaseRow) => phase.status === 'running' || phase.status === 'waiting';

function glyphOf(phase: PhaseRow): Segment {
  switch (phase.status) {
    case 'running':
      return spinner('accent');
    case 'waiting':
      return text(GLYPH.waiting, { tone: 'gate', bold: true });
    case 'interrupted':
      return text(GLYPH.interrupted, { tone: 'warn', bold: true });
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
  // Nobody could answer (the terminal went away): no decision was taken, so none is shown.
  if (note.by === 'nobody') return [text(`${note.gate}: nobody answered`, { tone: 'warn' })];
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
  const rows = phaseRows(props.state, innerWidth(props.width), innerHeight(props.height));
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
