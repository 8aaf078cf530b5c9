import { asksWhy, yesNoWords } from '../format/wording.js';
import { outputLanes } from '../store/reduce-lanes.js';
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

/** o and l: reading what the agents said (issue 16 item 11). */
const READING: readonly KeyHelp[] = [
  { keys: ['o'], label: 'all the output over the whole screen, long lines wrapped' },
  { keys: ['l'], label: 'the agent runs kept in history: read any one in full' },
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
  const reading = readingOverlayKeys(state);
  if (reading) return reading;
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
    return [
      { keys: ['q', 'Esc', 'Ctrl-C'], label: 'leave' },
      ...laneKeys(state),
      ...READING,
      ...OUTPUT_SCROLL,
      helpKey(),
    ];
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
  if (gate?.answer === 'yes_no') {
    const words = yesNoWords(gate.gate);
    keys.push(
      { keys: ['y'], label: words.yes },
      { keys: ['n'], label: asksWhy(gate.gate) ? `${words.no} (asks why first, optional)` : words.no },
    );
  }
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
  return [...keys, ...laneKeys(state), ...READING, ...OUTPUT_SCROLL, helpKey()];
}

/** Tab while lanes exist (issue 19): which lane's output the panel shows next. */
function laneKeys(state: UiState): KeyHelp[] {
  const lanes = outputLanes(state);
  if (lanes.length === 0) return [];
  const current = state.interaction.outputLane;
  const next = current === null ? lanes[0] : lanes[lanes.indexOf(current) + 1];
  return [
    {
      keys: ['Tab'],
      label: next
        ? `show lane ${next}'s output only${current === null ? '' : ` (now: lane ${current})`}`
        : `show every lane's output again (now: lane ${current})`,
    },
  ];
}

/** The keys over all the output, the list of agent runs, and one run's transcript. */
function readingOverlayKeys(state: UiState): KeyHelp[] | null {
  const overlay = state.interaction.overlay;
  const stop = { keys: ['Ctrl-C'], label: stopLabel(state) };
  if (overlay?.kind === 'output')
    return [
      ...OUTPUT_SCROLL,
      { keys: ['Space'], label: 'scroll the output down a page' },
      { keys: ['Esc', 'q', 'o'], label: 'back to the panels' },
      stop,
    ];
  if (overlay?.kind === 'logs')
    return [
      { keys: ['↑', 'k', '↓', 'j'], label: 'pick a run' },
      { keys: ['PgUp', 'PgDn', 'Home', 'g', 'End', 'G'], label: 'pick a run further away' },
      { keys: ['Enter', '→'], label: 'read the picked run in full' },
      { keys: ['r'], label: 'read the list again' },
      { keys: ['Esc', 'q', 'l'], label: 'back to the panels' },
      stop,
    ];
  if (overlay?.kind === 'log')
    return [
      { keys: ['↑', 'k', '↓', 'j'], label: 'scroll a line' },
      { keys: ['PgUp', 'PgDn', 'Space'], label: 'scroll a page' },
      { keys: ['Home', 'g', 'End', 'G'], label: 'go to the start / the end' },
      { keys: ['r'], label: 'read it again (a running agent adds lines)' },
      { keys: ['Esc', 'q', '←', 'h'], label: 'back to the list of runs' },
      stop,
    ];
  return null;
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
