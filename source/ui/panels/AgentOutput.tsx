import { Frame, innerHeight, innerWidth } from '../components/Frame.js';
import { Rows } from '../components/RowLine.js';
import { type Row, text, wrapRow } from '../components/row.js';
import { count } from '../format/text.js';
import type { OutputSnapshot } from '../store/create-store.js';
import type { OutputLine } from '../store/output-lines.js';
import { type LineRows, type OutputWindow, outputWindow } from '../store/scroll.js';
import { GLYPH } from '../theme.js';

/**
 * The running agent's output as it streams: its text, one line per tool call, errors and API
 * retries highlighted, and the run's milestones. Scrollable back through the kept lines; while
 * scrolled, the view stays on its lines as new ones arrive. A line wider than the panel wraps
 * (issue 16 item 4: an error and its `Fix:` are never cut at the edge); `o` shows the same lines
 * over the whole screen.
 */
export function outputRow(line: OutputLine): Row {
  switch (line.kind) {
    case 'error':
      return [text(`${GLYPH.failed} `, { tone: 'error', bold: true }), text(line.text, { tone: 'error' })];
    case 'tool':
      return [
        text(`${GLYPH.tool} `, { tone: 'accent' }),
        text(line.label ?? '', { bold: true, tone: 'accent' }),
        text(line.text ? ` ${line.text}` : ''),
      ];
    case 'retry':
      return [text(`↻ ${line.text}`, { tone: 'warn' })];
    case 'warn':
      return [text(`${GLYPH.warn} `, { tone: 'warn', bold: true }), text(line.text, { tone: 'warn' })];
    case 'agent':
      return [text(line.text, { tone: 'info', dim: true })];
    case 'info':
      return [text(line.text, { dim: true })];
    default:
      return [text(line.text)];
  }
}

// Wrapped rows per kept line, width and lane tag: a line is wrapped once, not on every frame or scroll.
const wrapped = new WeakMap<OutputLine, { width: number; tagged: boolean; rows: Row[] }>();

/** A kept line as the rows it takes at `width` columns (with its lane's tag when lanes mix). */
export function outputLineRows(line: OutputLine, width: number, tagged = false): Row[] {
  const known = wrapped.get(line);
  if (known && known.width === width && known.tagged === tagged) return known.rows;
  const rows = wrapRow(tagged ? taggedRow(line) : outputRow(line), width);
  wrapped.set(line, { width, tagged, rows });
  return rows;
}

/** How many rows each kept line of `output` takes at `width` (for scrolling by pages). */
export function outputRowsOf(
  output: Pick<OutputSnapshot, 'buffer'>,
  width: number,
  tagged = false,
): LineRows {
  return (seq) => {
    const line = output.buffer.at(seq);
    return line ? outputLineRows(line, width, tagged).length : 1;
  };
}

export function visibleOutput(
  output: OutputSnapshot,
  rows: number,
  width: number,
  tagged = false,
): { window: OutputWindow; rows: Row[] } {
  const window = outputWindow(
    output.firstSeq,
    output.lastSeq,
    output.anchor,
    rows,
    outputRowsOf(output, width, tagged),
  );
  const shown = output.buffer
    .range(window.fromSeq, window.toSeq)
    .flatMap((line) => outputLineRows(line, width, tagged));
  return {
    window,
    rows: shown.slice(window.topRowsHidden, shown.length - window.bottomRowsHidden).slice(0, rows),
  };
}

/** The top-border note: where the view is, and what the cap dropped. */
export function scrollNote(window: OutputWindow, dropped: number): string {
  const parts: string[] = [];
  if (!window.following) parts.push(`↑${count(window.above)} ↓${count(window.below)} · End follows`);
  else if (window.above > 0) parts.push(`↑${count(window.above)}`);
  if (dropped > 0) parts.push(`${count(dropped)} dropped`);
  return parts.join(' · ');
}

/** With every lane's lines mixed (issue 19), each lane's line says whose it is. */
export function taggedRow(line: OutputLine): Row {
  const row = outputRow(line);
  return line.lane ? [text(`${line.lane} │ `, { dim: true, tone: 'info' }), ...row] : row;
}

export function AgentOutput(props: {
  readonly output: OutputSnapshot;
  /** What the title names: the running agent, or which lane's lines these are. */
  readonly agent: string | null;
  /** Lines of several lanes are shown together: tag each with its lane. */
  readonly tagLanes?: boolean;
  readonly width: number;
  readonly height: number;
  /** Over the whole screen (`o`): the title says how to go back. */
  readonly full?: boolean;
}) {
  const { window, rows } = visibleOutput(
    props.output,
    innerHeight(props.height),
    innerWidth(props.width),
    props.tagLanes === true,
  );
  const title = `${props.full ? 'All output' : 'Output'}${props.agent ? ` · ${props.agent}` : ''}`;
  return (
    <Frame
      title={title}
      aside={scrollNote(window, props.output.dropped) || undefined}
      width={props.width}
      height={props.height}
      tone={props.full ? 'accent' : undefined}
    >
      {rows.length === 0 ? <Rows rows={[[text('no output yet', { dim: true })]]} /> : <Rows rows={rows} />}
    </Frame>
  );
}
