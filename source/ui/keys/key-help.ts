import type { UiState } from '../store/ui-state.js';

/**
 * Every key that does something right now, in words: the `?` overlay lists them (issue 16 item
 * 11). It mirrors key-map.ts, and test/ui/key-help.test.ts presses every key in every context to
 * check that each key that acts is listed here, and each listed key acts.
 */
export interface KeyHelp {
  /** Key names as the overlay prints them: `y`, `Ctrl-C`, `PgUp`, `↑`. */
  readonly keys: readonly string[];
  readonly label: string;
}

const OUTPUT_SCROLL: readonly KeyHelp[] = [
  { keys: ['↑', 'k'], label: 'scroll the output up a line' },
  { keys: ['↓', 'j'], label: 'scroll the output down a line' },
  { keys: ['PgUp', 'PgDn'], label: 'scroll the output a page' },
  { keys: ['Home', 'g'], label: 'go to the oldest kept line' },
  { keys: ['End', 'G'], label: 'follow the newest line again' },
];

const TYPING_SCROLL: readonly KeyHelp[] = [
  { keys: ['↑', '↓', 'PgUp', 'PgDn', 'Home', 'End'], label: 'scroll the output (letters type)' },
];

export function contextKeys(state: UiState): KeyHelp[] {
  const { interaction, gate } = state;
  const overlay = interaction.overlay;
  if (overlay?.kind === 'help') return [{ keys: ['any key'], label: 'close this list' }];
  if (state.view === 'fleet')
    return [{ keys: ['q', 'Esc', 'Ctrl-C'], label: 'leave (the fleet goes on)' }, helpKey()];
  if (overlay?.kind === 'document') {
    const count = gate?.documents?.length ?? 0;
    return [
      { keys: ['↑', 'k', '↓', 'j'], label: 'scroll a line' },
      { keys: ['PgUp', 'PgDn', 'Space'], label: 'scroll a page' },
      { keys: ['Home', 'g', 'End', 'G'], label: 'go to the start / the end' },
      ...(count > 1
        ? [
            { keys: ['Tab', '→', 'l'], label: 'next document' },
            { keys: ['←', 'h'], label: 'previous document' },
            {
              keys: Array.from({ length: Math.min(9, count) }, (_, i) => String(i + 1)),
              label: 'pick a document by its number',
            },
          ]
        : []),
      { keys: ['Esc', 'q', 'v'], label: 'close the viewer (back to the question)' },
      { keys: ['Ctrl-C'], label: stopLabel(state) },
    ];
  }
  if (interaction.over)
    return [{ keys: ['q', 'Esc', 'Ctrl-C'], label: 'leave' }, ...OUTPUT_SCROLL, helpKey()];
  if (interaction.confirmingAbort)
    return [
      { keys: ['y', 'a'], label: 'abort the run (it ends FAILED)' },
      { keys: ['any other key'], label: 'cancel' },
      { keys: ['Ctrl-C'], label: stopLabel(state) },
    ];
  if (gate && interaction.rejecting)
    return [
      { keys: ['type'], label: 'why you reject (optional; the agent reads it next attempt)' },
      { keys: ['Enter'], label: 'reject' },
      { keys: ['Ctrl-J', 'Alt-Enter'], label: 'new line' },
      { keys: ['Backspace', 'Ctrl-U'], label: 'delete a character / clear' },
      { keys: ['Esc'], label: 'back to the question (nothing is rejected)' },
      { keys: ['Ctrl-C'], label: stopLabel(state) },
    ];
  if (gate?.answer === 'text')
    return [
      { keys: ['type'], label: 'your answer (? and letters are typed)' },
      { keys: ['Enter'], label: 'send the answer' },
      { keys: ['Ctrl-J', 'Alt-Enter'], label: 'new line' },
      { keys: ['Backspace', 'Ctrl-U'], label: 'delete a character / clear' },
      ...(gate.gate === 'plan' ? [{ keys: ['Ctrl-P'], label: 'proceed to the spec with what is open' }] : []),
      { keys: ['Esc'], label: 'decline to answer' },
      { keys: ['Ctrl-C'], label: stopLabel(state) },
      ...TYPING_SCROLL,
    ];
  const keys: KeyHelp[] = [];
  if (gate?.answer === 'yes_no')
    keys.push({ keys: ['y'], label: 'approve' }, { keys: ['n'], label: 'reject (asks why first, optional)' });
  if ((gate?.documents?.length ?? 0) > 0)
    keys.push({
      keys: ['v'],
      label: `read ${gate?.documents?.map((d) => d.name).join(', ')} in full`,
    });
  // Issue 20: attached to a fleet run, leaving is all this app does to it.
  if (state.remote !== null && !interaction.aborting)
    return [
      ...keys,
      { keys: ['q', 'Ctrl-C'], label: 'leave (the run goes on in the fleet)' },
      ...OUTPUT_SCROLL,
      helpKey(),
    ];
  keys.push(
    interaction.aborting
      ? { keys: ['Ctrl-C'], label: 'force quit now' }
      : { keys: ['a'], label: 'abort the run (asks first; it ends FAILED)' },
  );
  if (state.view === 'workflow' && !interaction.aborting && !interaction.pausing)
    keys.push({ keys: ['p'], label: 'pause: the running agent finishes, then stop (ralphy start resumes)' });
  if (!interaction.aborting) keys.push({ keys: ['Ctrl-C'], label: stopLabel(state) });
  return [...keys, ...OUTPUT_SCROLL, helpKey()];
}

function helpKey(): KeyHelp {
  return { keys: ['?'], label: 'this list of keys' };
}

/** What the first Ctrl-C does: a workflow stays resumable; a tick or loop rolls back. */
function stopLabel(state: UiState): string {
  if (state.interaction.aborting) return 'force quit now';
  if (state.remote !== null) return 'leave (the run goes on in the fleet); twice: force quit';
  return state.view === 'workflow'
    ? 'stop the run (ralphy start resumes it); twice: force quit'
    : 'stop the run (the tick rolls back); twice: force quit';
}
