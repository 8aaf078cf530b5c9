import { Frame, innerHeight, innerWidth } from '../components/Frame.js';
import { Rows } from '../components/RowLine.js';
import { type Row, text, wrapRow } from '../components/row.js';
import { fitTo } from '../format/text.js';
import { logLabel } from '../logs/agent-logs.js';
import type { LogListOverlay } from '../store/ui-state.js';

/**
 * The agent runs kept in history, newest first (issue 16 item 11): `l` opens the list, Enter reads
 * one in full in the viewer. The selected run is inverted; the list scrolls to keep it in view.
 */
export function logListRows(list: LogListOverlay, width: number, height: number): Row[] {
  const head: Row[] = list.error ? wrapRow([text(list.error, { tone: 'error' })], width) : [];
  if (list.entries === null) return [...head, [text('reading the list…', { dim: true })]];
  if (list.entries.length === 0)
    return [
      ...head,
      ...wrapRow(
        [
          text('No agent run is kept yet: each run leaves its transcript in relais/history/agents/.', {
            dim: true,
          }),
        ],
        width,
      ),
    ];
  const room = Math.max(1, height - head.length);
  const first = Math.max(0, Math.min(list.selected - Math.floor(room / 2), list.entries.length - room));
  const rows = list.entries.slice(first, first + room).map((entry, index): Row => {
    const selected = first + index === list.selected;
    const size = entry.bytes >= 1024 ? `${(entry.bytes / 1024).toFixed(1)} KB` : `${entry.bytes} B`;
    const line = `${selected ? '›' : ' '} ${logLabel(entry)}  ${size}${entry.running ? '  running' : ''}`;
    return [text(fitTo(line, width), { inverse: selected, bold: selected })];
  });
  return [...head, ...rows];
}

export function LogList(props: {
  readonly list: LogListOverlay;
  readonly width: number;
  readonly height: number;
}) {
  const count = props.list.entries?.length ?? 0;
  return (
    <Frame
      title="Agent runs"
      aside={props.list.entries ? `${count} kept` : undefined}
      width={props.width}
      height={props.height}
      tone="accent"
    >
      <Rows rows={logListRows(props.list, innerWidth(props.width), innerHeight(props.height))} />
    </Frame>
  );
}
