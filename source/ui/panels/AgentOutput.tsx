import { Frame, innerHeight } from '../components/Frame.js';
import { Rows } from '../components/RowLine.js';
import { type Row, text } from '../components/row.js';
import { count } from '../format/text.js';
import type { OutputSnapshot } from '../store/create-store.js';
import type { OutputLine } from '../store/output-lines.js';
import { type OutputWindow, outputWindow } from '../store/scroll.js';
import { GLYPH } from '../theme.js';

/**
 * The running agent's output as it streams: its text, one line per tool call, errors and API
 * retries highlighted, and the run's milestones. Scrollable back through the kept lines; while
 * scrolled, the view stays on its lines as new ones arrive.
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

export function visibleOutput(
  output: OutputSnapshot,
  rows: number,
): { window: OutputWindow; lines: OutputLine[] } {
  const window = outputWindow(output.firstSeq, output.lastSeq, output.anchor, rows);
  return { window, lines: output.buffer.range(window.fromSeq, window.toSeq) };
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
}) {
  const { window, lines } = visibleOutput(props.output, innerHeight(props.height));
  return (
    <Frame
      title={props.agent ? `Output · ${props.agent}` : 'Output'}
      aside={scrollNote(window, props.output.dropped) || undefined}
      width={props.width}
      height={props.height}
    >
      {lines.length === 0 ? (
        <Rows rows={[[text('no output yet', { dim: true })]]} />
      ) : (
        <Rows rows={lines.map(props.tagLanes ? taggedRow : outputRow)} />
      )}
    </Frame>
  );
}
