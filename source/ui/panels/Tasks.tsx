import { Frame, innerHeight, innerWidth } from '../components/Frame.js';
import { Rows } from '../components/RowLine.js';
import { clipRows, type Row, type Segment, spinner, text } from '../components/row.js';
import { fitTo } from '../format/text.js';
import type { TaskRow, UiState } from '../store/ui-state.js';
import { GLYPH } from '../theme.js';

/**
 * The tasks of specs/TASKS.md with what the agent claimed and what the runner verified side by
 * side. Only a runner verification earns the ✓: "the agent said done" shows as ◐ claimed.
 */
export function taskRows(state: UiState, width: number): Row[] {
  if (state.tasks.length === 0) return [[text('no task list yet', { dim: true })]];
  if (width < COMPACT_BELOW) return state.tasks.map((task) => compactRow(task, width));
  // The runner's verdict is what matters most: it gets the room the title and the claim leave.
  const titleWidth = Math.max(8, Math.floor((width - 22) * 0.45));
  const claimWidth = Math.max(6, Math.floor((width - 22) * 0.2));
  return state.tasks.map((task) => [
    taskGlyph(task),
    text(` ${String(task.number).padStart(2)} `, { dim: true }),
    text(fitTo(task.title, titleWidth), { bold: task.status === 'in_progress' }),
    text(' agent: ', { dim: true }),
    text(fitTo(task.claimed ?? '—', claimWidth), { dim: task.claimed === null }),
    text(' runner: ', { dim: true }),
    task.verified
      ? text(task.verified, { tone: 'ok' })
      : text('not verified', {
          tone: task.claimed || task.status === 'completed' ? 'warn' : undefined,
          dim: !task.claimed,
        }),
  ]);
}

/** Under this width a task shows marks instead of the claim and verification texts. */
const COMPACT_BELOW = 64;

function compactRow(task: TaskRow, width: number): Row {
  return [
    taskGlyph(task),
    text(` ${String(task.number).padStart(2)} `, { dim: true }),
    text(fitTo(task.title, Math.max(4, width - 23)), { bold: task.status === 'in_progress' }),
    text(' agent ', { dim: true }),
    task.claimed ? text(GLYPH.done, { tone: 'warn' }) : text('·', { dim: true }),
    text(' runner ', { dim: true }),
    task.verified
      ? text(GLYPH.done, { tone: 'ok' })
      : task.claimed
        ? text(GLYPH.failed, { tone: 'warn' })
        : text('·', { dim: true }),
  ];
}

export function taskGlyph(task: TaskRow): Segment {
  if (task.verified) return text(GLYPH.done, { tone: 'ok' });
  if (task.claimed || task.status === 'completed') return text(GLYPH.claimed, { tone: 'warn' });
  if (task.status === 'in_progress') return spinner('accent');
  return text(GLYPH.pending, { dim: true });
}

export function Tasks(props: { readonly state: UiState; readonly width: number; readonly height: number }) {
  const verified = props.state.tasks.filter((t) => t.verified).length;
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
