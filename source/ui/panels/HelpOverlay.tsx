import { Frame, innerHeight, innerWidth } from '../components/Frame.js';
import { Rows } from '../components/RowLine.js';
import { clipRows, type Row, text } from '../components/row.js';
import { fitTo, wrapText } from '../format/text.js';
import { contextKeys } from '../keys/key-help.js';
import type { UiState } from '../store/ui-state.js';

/** The `?` list: every key that works under it, in words (issue 16 item 11). */
export function helpRows(state: UiState, width: number): Row[] {
  // The keys of the screen under the list, not of the list itself.
  const under = { ...state, interaction: { ...state.interaction, overlay: null } };
  const entries = contextKeys(under);
  const keyWidth = Math.min(24, Math.max(...entries.map((e) => e.keys.join(' ').length)) + 2);
  return [
    // A label wraps under itself on a narrow screen (issue 16 item 4: nothing is cut off).
    ...entries.flatMap((entry): Row[] =>
      wrapText(entry.label, Math.max(10, width - keyWidth), 3).map(
        (part, i): Row => [
          text(fitTo(i === 0 ? entry.keys.join(' ') : '', keyWidth), { bold: true, tone: 'accent' }),
          text(part),
        ],
      ),
    ),
    [text('any key closes this list', { dim: true })],
  ];
}

export function HelpOverlay(props: {
  readonly state: UiState;
  readonly width: number;
  readonly height: number;
}) {
  const rows = helpRows(props.state, innerWidth(props.width));
  return (
    <Frame title="Keys" aside="?" width={props.width} height={props.height} tone="accent">
      <Rows rows={clipRows(rows, innerHeight(props.height))} />
    </Frame>
  );
}
