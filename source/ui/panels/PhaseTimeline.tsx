import { spendWithHeld } from '../../engine/protocol/money.js';
import { Frame, innerHeight, innerWidth } from '../components/Frame.js';
import { Rows } from '../components/RowLine.js';
import { clipRows, type Row, type Segment, spinner, text } from '../components/row.js';
import { usd } from '../format/money.js';
import { fitTo, flatten, padStartTo, widthOf } from '../format/text.js';
import { duration } from '../format/time.js';
import { gateOutcome } from '../format/wording.js';
import { nothingRuns, SHORT_PHASE_NAMES, workIsOver } from '../store/selectors.js';
import type { GateNote, PhaseRow, PhaseSpendModel, UiState } from '../store/ui-state.js';
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
  // Too few rows for one phase a row (80×24): every phase on a line or two, short names.
  if (fixed > height) return compactPhaseRows(state, width, height);
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
  const name =
    phase.state === 'IMPLEMENTATION' && phase.status === 'running' && state.tickPhase
      ? `${phase.state} · step ${state.tickPhase}`
      : phase.state;
  const spend = spendLabel(phase.spend);
  const label = spend ? `${name} · ${spend}` : name;
  return [
    glyphOf(phase, state),
    text(' '),
    text(fitTo(label, nameWidth), { dim: phase.status === 'pending', bold: isCurrent(phase) }),
    text(padStartTo(phaseDuration(phase, state.nowMs), 8), { dim: true }),
  ];
}

/**
 * "$0.4200/$1.00 3/10 calls": what the phase's agents cost and how many calls it made, against its
 * caps (config workflow.phases) when it has them. Nothing before its first call. Calls of unknown
 * cost: "$0.0100 + $3.00 held (2 unknown)/$5.00 4 calls", the reported part, then the held part.
 */
export function spendLabel(spend: PhaseSpendModel | undefined): string {
  if (!spend || (spend.calls === 0 && spend.costUsd === 0)) return '';
  // Calls killed before they reported a cost are held at their maximum: said apart, not as spend.
  const amount = spendWithHeld(spend.costUsd, spend.held, true);
  const cost = `${amount}${spend.maxCostUsd !== null ? `/${usd(spend.maxCostUsd)}` : ''}`;
  const calls = `${spend.calls}${spend.maxCalls !== null ? `/${spend.maxCalls}` : ''} call${spend.calls === 1 && spend.maxCalls === null ? '' : 's'}`;
  return `${cost} ${calls}`;
}

/** Each phase as `glyph name`, packed into as few rows as the width allows; the end last. */
export function compactPhaseRows(state: UiState, width: number, height: number): Row[] {
  const items: Row[] = state.phases.map((phase) => [
    glyphOf(phase, state),
    text(` ${SHORT_PHASE_NAMES[phase.state] ?? phase.state}`, {
      dim: phase.status === 'pending',
      bold: isCurrent(phase),
    }),
  ]);
  const end = endRow(state);
  if (end) items.push(end);
  const rows: Segment[][] = [];
  let used = 0;
  for (const item of items) {
    const w = item.reduce((sum, seg) => sum + ('text' in seg ? widthOf(seg.text) : 1), 0);
    const current = rows.at(-1);
    if (current && used + 2 + w <= width) {
      current.push(text('  '), ...item);
      used += 2 + w;
    } else {
      rows.push([...item]);
      used = w;
    }
  }
  return clipRows(rows, height);
}

function endRow(state: UiState): Row | null {
  const end = state.end;
  if (!end) return null;
  const ok = end.state === 'COMPLETED';
  if (ok && end.partial)
    return [
      text(GLYPH.partial, { tone: 'warn' }),
      text(' '),
      text(end.state, { bold: true, tone: 'warn' }),
      ...(end.reason ? [text(` · ${end.reason}`, { tone: 'warn' })] : []),
    ];
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

function glyphOf(phase: PhaseRow, state: UiState): Segment {
  switch (phase.status) {
    case 'running':
      // At a gate the phase waits for a human: nothing turns (issue 16 item 10: an idle screen
      // is not redrawn ten times a second), and once the work is over nothing runs at all.
      if (state.gate && !workIsOver(state)) return text(GLYPH.waiting, { tone: 'gate', bold: true });
      return nothingRuns(state) ? text(GLYPH.stopped, { dim: true }) : spinner('accent');
    case 'waiting':
      return text(GLYPH.waiting, { tone: 'gate', bold: true });
    case 'interrupted':
      return text(GLYPH.interrupted, { tone: 'warn', bold: true });
    case 'done':
      return text(GLYPH.done, { tone: 'ok' });
    case 'partial':
      return text(GLYPH.partial, { tone: 'warn' });
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
  // The log's words (format/wording.ts): nobody answering names no decision, Esc at a question
  // is "declined", --yes is named.
  if (note.decision === 'aborted')
    return [text(gateOutcome(note.gate, note.decision, note.by, note.gate, note.answer), { tone: 'error' })];
  const words = gateOutcome(note.gate, note.decision, note.by, note.gate);
  if (note.by === 'nobody') return [text(words, { tone: 'warn' })];
  if (note.decision === 'approve') return [text(words, { tone: 'ok' })];
  if (note.decision === 'reject')
    return [
      text(words, { tone: 'error' }),
      ...(note.answer ? [text(`: ${flatten(note.answer, 200)}`, { dim: true })] : []),
    ];
  return [text(words, { tone: 'info' }), text(`: ${flatten(note.answer ?? '', 200)}`, { dim: true })];
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
