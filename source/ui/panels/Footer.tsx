import { Box } from 'ink';
import { RowLine } from '../components/RowLine.js';
import { type Row, rowWidth, type Segment, text } from '../components/row.js';
import { yesNoWords } from '../format/wording.js';
import { workIsOver } from '../store/selectors.js';
import type { UiState } from '../store/ui-state.js';

/** The keys that work right now (and only those), then the hint for the last key, if any. */
export function footerKeys(state: UiState): Array<[key: string, label: string]> {
  const { interaction, gate } = state;
  const scroll: [string, string] = ['↑↓ PgUp PgDn Home End', 'scroll'];
  const help: [string, string] = ['?', 'keys'];
  const overlaid = overlayKeys(state);
  if (overlaid) return overlaid;
  // Issue 19: Tab switches the Output panel between lanes (and back to all of them).
  const lanes: Array<[string, string]> = state.lanes.rows.length > 0 ? [['Tab', laneWord(state)]] : [];
  const reading: Array<[string, string]> = [
    ['o', 'output'],
    ['l', 'logs'],
  ];
  if (state.view === 'fleet') return [['q', interaction.over ? 'quit' : 'leave'], help];
  if (interaction.over) return [['q', 'quit'], ...lanes, help, ...reading, scroll];
  if (interaction.confirmingAbort)
    return [
      ['y/a', 'abort the run'],
      ['any other key', 'cancel'],
    ];
  if (gate && interaction.rejecting)
    return [
      ['Enter', 'reject'],
      ['Esc', 'back'],
      ['^C', 'stop'],
    ];
  if (gate?.answer === 'text') {
    return [
      ['Enter', 'send'],
      ['Ctrl-J', 'new line'],
      ...(gate.gate === 'plan' ? ([['Ctrl-P', 'proceed']] as Array<[string, string]>) : []),
      ['Esc', 'decline'],
      ['^C', 'stop'],
      ['PgUp PgDn', 'scroll'],
    ];
  }
  if (interaction.aborting) return [['^C', 'force quit'], ...lanes, help, scroll];
  const keys: Array<[string, string]> = [];
  if (gate?.answer === 'yes_no') {
    const words = yesNoWords(gate.gate);
    keys.push(['y', words.yes], ['n', words.no]);
  }
  if ((gate?.documents?.length ?? 0) > 0) keys.push(['v', 'read']);
  // Issue 20: attached to a fleet run, leaving does not stop it.
  if (state.remote) return [...keys, ...lanes, ['q', 'leave (the run goes on)'], help, scroll];
  keys.push(...lanes, help, ['a', 'abort']);
  if (state.view === 'workflow' && !interaction.pausing) keys.push(['p', 'pause']);
  keys.push(['^C', 'stop'], ...reading, scroll);
  return keys;
}

/** The keys over something that covers the panels (the ? list, the output, the runs, a document). */
function overlayKeys(state: UiState): Array<[key: string, label: string]> | null {
  const { interaction, gate } = state;
  const overlay = interaction.overlay;
  if (overlay?.kind === 'help') return [['any key', 'close']];
  if (overlay?.kind === 'output')
    return [
      ['↑↓ PgUp PgDn Home End', 'scroll'],
      ['Esc', 'back'],
    ];
  if (overlay?.kind === 'logs')
    return [
      ['↑↓', 'pick'],
      ['Enter', 'read'],
      ['r', 'refresh'],
      ['Esc', 'back'],
    ];
  if (overlay?.kind === 'log')
    return [
      ['↑↓ PgUp PgDn Home End', 'scroll'],
      ['r', 'read again'],
      ['Esc', 'the list'],
    ];
  if (overlay?.kind === 'document')
    return [
      ['↑↓ PgUp PgDn', 'scroll'],
      ...((gate?.documents?.length ?? 0) > 1 ? ([['Tab', 'next file']] as Array<[string, string]>) : []),
      ['Esc', 'back to the question'],
    ];
  return null;
}

/** What Tab does next: one lane's output, or all of them again. */
function laneWord(state: UiState): string {
  const rows = state.lanes.rows;
  const current = state.interaction.outputLane;
  const at = current === null ? -1 : rows.findIndex((r) => r.lane === current);
  const next = rows[at + 1];
  return next ? `output: ${next.lane}` : 'output: all lanes';
}

export function footerRow(state: UiState, width = Number.POSITIVE_INFINITY): Row {
  const { interaction } = state;
  const overlay = interaction.overlay;
  const readingOverGate =
    state.gate !== null &&
    !interaction.over &&
    (overlay?.kind === 'output' || overlay?.kind === 'logs' || overlay?.kind === 'log');
  const lead: Segment[] = interaction.confirmingAbort
    ? [text(' Abort the running work? ', { bold: true, tone: 'error' })]
    : state.gate && interaction.rejecting && !overlay
      ? [text(' Reject? ', { bold: true, tone: 'error' })]
      : readingOverGate
        ? // A question came while the human reads: it waits under the overlay.
          [text(' A question waits (Esc) ', { bold: true, tone: 'gate' })]
        : interaction.aborting && !workIsOver(state)
          ? [
              interaction.interrupting
                ? // Ctrl-C is a resumable interrupt (seed 002 §7), not an abort: say so.
                  text(' stopping… ralphy start resumes ', { bold: true, tone: 'warn' })
                : text(' aborting… ', { bold: true, tone: 'error' }),
            ]
          : [];
  // The hint answers the key just pressed: it comes before the key list.
  const hint = interaction.hint ? [text(` ${interaction.hint} `, { tone: 'warn' })] : [];
  const row: Segment[] = [...lead, ...hint];
  // Whole keys only: a key whose label would be cut at the edge is left to the ? list.
  let used = rowWidth(row);
  for (const [key, label] of footerKeys(state)) {
    const entry = [text(` ${key} `, { inverse: true }), text(` ${label}  `, { dim: true })];
    const more = rowWidth(entry) - 2; // the trailing gap may go past the edge
    if (used + more > width) break;
    row.push(...entry);
    used += rowWidth(entry);
  }
  return row;
}

export function Footer({ state, width }: { readonly state: UiState; readonly width: number }) {
  return (
    <Box width={width} height={1} flexShrink={0}>
      <RowLine row={footerRow(state, width)} />
    </Box>
  );
}
