import { Frame, innerHeight, innerWidth } from '../components/Frame.js';
import { Rows } from '../components/RowLine.js';
import { clipRows, type Row, type Segment, spinner, text } from '../components/row.js';
import { fitTo } from '../format/text.js';
import { nothingRuns } from '../store/selectors.js';
import type { TaskRow, UiState } from '../store/ui-state.js';
import { GLYPH } from '../theme.js';

/**
 * The tasks of specs/TASKS.md with what the agent claimed and what the runner decided side by
 * side. Only the runner's `verified` verdict earns the ✓ (issue 16 item 1): "the agent said done"
 * shows as ◐ claimed, a stopped or blocked attempt as ✗ with the runner's reason.
 */
export function taskRows(state: UiState, width: number): Row[] {
  if (state.tasks.length === 0) return [[text('no task list yet', { dim: true })]];
  // Once the work is over, or while it waits at a gate, an in-progress task does not spin.
  const over = nothingRuns(state);
  if (width < COMPACT_BELOW) return state.tasks.map((task) => compactRow(task, width, over));
  // The runner's verdict is what matters most: it gets the room the title and the claim leave.
  const titleWidth = Math.max(8, Math.floor((width - 22) * 0.45));
  const claimWidth = Math.max(6, Math.floor((width - 22) * 0.2));
  return state.tasks.map((task) => [
    taskGlyph(task, over),
    text(` ${String(task.number).padStart(2)} `, { dim: true }),
    text(fitTo(task.title, titleWidth), { bold: task.status === 'in_progress' }),
    text(' agent: ', { dim: true }),
    text(fitTo(task.claimed ?? '—', claimWidth), { dim: task.claimed === null }),
    text(' runner: ', { dim: true }),
    runnerSays(task),
  ]);
}

/** The runner's words on a task, in the tone of its verdict. */
function runnerSays(task: TaskRow): Segment {
  if (task.verdict === 'verified') return text(task.verified ?? 'verified', { tone: 'ok' });
  if (task.verdict === 'rejected')
    return text(`not accepted: ${task.verified ?? 'stopped'}`, { tone: 'error' });
  return text('not verified', {
    tone: task.claimed || task.status === 'completed' ? 'warn' : undefined,
    dim: !task.claimed,
  });
}

/** Tasks the runner verified: the only count of "done" (every panel and count uses this). */
export function verifiedCount(tasks: readonly TaskRow[]): number {
  return tasks.filter((t) => t.verdict === 'verified').length;
}

/** Under this width a task shows marks instead of the claim and verification texts. */
const COMPACT_BELOW = 64;

function compactRow(task: TaskRow, width: number, over: boolean): Row {
  return [
    taskGlyph(task, over),
    text(` ${String(task.number).padStart(2)} `, { dim: true }),
    text(fitTo(task.title, Math.max(4, width - 23)), { bold: task.status === 'in_progress' }),
    text(' agent ', { dim: true }),
    // A claim is never a ✓: that mark belongs to the runner's verdict alone.
    task.claimed ? text(GLYPH.claimed, { tone: 'warn' }) : text('·', { dim: true }),
    text(' runner ', { dim: true }),
    task.verdict === 'verified'
      ? text(GLYPH.done, { tone: 'ok' })
      : task.verdict === 'rejected'
        ? text(GLYPH.failed, { tone: 'error' })
        : task.claimed
          ? text(GLYPH.failed, { tone: 'warn' })
          : text('·', { dim: true }),
  ];
}

export function taskGlyph(task: TaskRow, over = false): Segment {
  if (task.verdict === 'verified') return text(GLYPH.done, { tone: 'ok' });
  if (task.verdict === 'rejected' && task.status !== 'in_progress')
    return text(GLYPH.failed, { tone: 'error' });
  if (task.claimed || task.status === 'completed') return text(GLYPH.claimed, { tone: 'warn' });
  if (task.status === 'in_progress') return over ? text(GLYPH.stopped, { dim: true }) : spinner('accent');
  return text(GLYPH.pending, { dim: true });
}

export function Tasks(props: { readonly state: UiState; readonly width: number; readonly height: number }) {
  const verified = verifiedCount(props.state.tasks);
  const rows = clipRows(taskRows(props.state, innerWidth(props.width)), innerHeight(props.height));
  return (
    <Frame
      title="Tasks"
      aside={`${verified}/${props.state.tasks.length} verified`}
      width={props.width}
      height={props.height}
    >
      <Rows rows={rows} />
    </Frame>
  );
}
