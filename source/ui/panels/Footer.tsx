import { Box } from 'ink';
import { RowLine } from '../components/RowLine.js';
import { type Row, type Segment, text } from '../components/row.js';
import { workIsOver } from '../store/selectors.js';
import type { UiState } from '../store/ui-state.js';

/** The keys that work right now (and only those), then the hint for the last key, if any. */
export function footerKeys(state: UiState): Array<[key: string, label: string]> {
  const { interaction, gate } = state;
  const scroll: [string, string] = ['↑↓ PgUp PgDn Home End', 'scroll'];
  const help: [string, string] = ['?', 'keys'];
  const overlay = interaction.overlay;
  if (overlay?.kind === 'help') return [['any key', 'close']];
  if (overlay?.kind === 'document')
    return [
      ['↑↓ PgUp PgDn', 'scroll'],
      ...((gate?.documents?.length ?? 0) > 1 ? ([['Tab', 'next file']] as Array<[string, string]>) : []),
      ['Esc', 'back to the question'],
    ];
  if (state.view === 'fleet') return [['q', interaction.over ? 'quit' : 'leave'], help];
  if (interaction.over) return [['q', 'quit'], help, scroll];
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
  if (interaction.aborting) return [['^C', 'force quit'], help, scroll];
  const keys: Array<[string, string]> = [];
  if (gate?.answer === 'yes_no') keys.push(['y', 'approve'], ['n', 'reject']);
  if ((gate?.documents?.length ?? 0) > 0) keys.push(['v', 'read']);
  // Issue 20: attached to a fleet run, leaving does not stop it.
  if (state.remote) return [...keys, ['q', 'leave (the run goes on)'], help, scroll];
  keys.push(help, ['a', 'abort']);
  if (state.view === 'workflow' && !interaction.pausing) keys.push(['p', 'pause']);
  keys.push(['^C', 'stop'], scroll);
  return keys;
}

export function footerRow(state: UiState): Row {
  const { interaction } = state;
  const lead: Segment[] = interaction.confirmingAbort
    ? [text(' Abort the running work? ', { bold: true, tone: 'error' })]
    : state.gate && interaction.rejecting && !interaction.overlay
      ? [text(' Reject? ', { bold: true, tone: 'error' })]
      : interaction.aborting && !workIsOver(state)
        ? [
            interaction.interrupting
              ? // Ctrl-C is a resumable interrupt (seed 002 §7), not an abort: say so.
                text(' stopping… ralphy start resumes ', { bold: true, tone: 'warn' })
              : text(' aborting… ', { bold: true, tone: 'error' }),
          ]
        : [];
  const keys = footerKeys(state).flatMap(([key, label]): Segment[] => [
    text(` ${key} `, { inverse: true }),
    text(` ${label}  `, { dim: true }),
  ]);
  // The hint answers the key just pressed: it comes before the key list, which a narrow
  // terminal cuts at its end.
  const hint = interaction.hint ? [text(` ${interaction.hint} `, { tone: 'warn' })] : [];
  return [...lead, ...hint, ...keys];
}

export function Footer({ state, width }: { readonly state: UiState; readonly width: number }) {
  return (
    <Box width={width} height={1} flexShrink={0}>
      <RowLine row={footerRow(state)} />
    </Box>
  );
}
