import type { Key } from 'ink';
import { asksWhy } from '../format/wording.js';
import type { AgentLogEntry } from '../logs/agent-logs.js';
import { outputLanes } from '../store/reduce-lanes.js';
import type { ScrollCommand } from '../store/scroll.js';
import type { LogListOverlay, Overlay, UiState } from '../store/ui-state.js';

/**
 * What a key means right now, as data (pure, so every binding is tested without a terminal):
 *
 * - Ctrl-C: aborts the running work (graceful), a second Ctrl-C force-quits; once the work is
 *   over it leaves like `q`.
 * - y / n: approve / reject at a yes/no gate.
 * - a: asks to confirm an abort; then y or a second a aborts, anything else cancels.
 * - p (a workflow): pause: the running agent finishes, then the run stops before the next one,
 *   resumable with `ralphy start` (issue 16 item 11).
 * - q: leaves once the work is over (before that, it only says so).
 * - ↑/↓ (k/j), PgUp/PgDn, Home/End (g/G): scroll the agent output; End follows the newest line.
 * - At a text gate, keys type the answer: Enter sends, Ctrl-J or Alt-Enter inserts a new line,
 *   Backspace deletes, Ctrl-U clears, Esc declines. Arrows and page keys still scroll.
 * - At the planner's question gate, Ctrl-P answers "proceed" (seed 004's proceed signal) whatever
 *   was typed: the planner goes on to the spec, assuming what is still open.
 * - ?: the list of every key that works now (keys/key-help.ts); any key closes it.
 * - At a gate with documents, v opens them in the viewer: ↑↓ PgUp PgDn Home End (and k j g G,
 *   Space) scroll, Tab or →/← (l/h) or a digit picks a document, Esc, q or v closes.
 * - n at a yes/no gate asks for an optional reason: typed like an answer, Enter rejects, Esc goes
 *   back to the question (issue 16 item 5).
 * - Tab, while parallel lanes run (or after): the Output panel shows the next lane's lines only,
 *   then after the last lane every line again (issue 19).
 * - o shows all the kept output over the whole screen (the same scroll keys); l lists the agent
 *   runs kept in history, Enter reads one in full, r reads it again (issue 16 item 11). Esc, q or
 *   the same key goes back. Both work while the run goes on and once it is over.
 */
export type KeyAction =
  | { readonly type: 'none' }
  | { readonly type: 'hint'; readonly text: string }
  | { readonly type: 'interrupt' }
  | { readonly type: 'quit' }
  | { readonly type: 'gate'; readonly decision: 'approve' | 'reject'; readonly reason?: string }
  | { readonly type: 'reject_ask' }
  | { readonly type: 'reject_cancel' }
  | { readonly type: 'overlay'; readonly overlay: Overlay | null }
  | { readonly type: 'document_scroll'; readonly command: ScrollCommand }
  | { readonly type: 'answer'; readonly text: string }
  | { readonly type: 'draft'; readonly draft: string; readonly hint?: string }
  | { readonly type: 'abort_ask' }
  | { readonly type: 'abort_confirm' }
  | { readonly type: 'abort_cancel' }
  | { readonly type: 'pause' }
  | { readonly type: 'output_lane'; readonly lane: string | null }
  | { readonly type: 'scroll'; readonly command: ScrollCommand }
  | { readonly type: 'logs_open' }
  | { readonly type: 'log_open'; readonly entry: AgentLogEntry; readonly keepTop?: boolean };

export type KeyInfo = Pick<
  Key,
  | 'upArrow'
  | 'downArrow'
  | 'leftArrow'
  | 'rightArrow'
  | 'pageUp'
  | 'pageDown'
  | 'home'
  | 'end'
  | 'return'
  | 'escape'
  | 'ctrl'
  | 'meta'
  | 'backspace'
  | 'delete'
  | 'tab'
>;

/** What Ctrl-P sends at a plan gate: the runner reads it as an explicit proceed signal. */
export const PROCEED = 'proceed';

/** The longest answer a text gate takes (WORKFLOW.json keeps 4,000 characters). */
export const MAX_DRAFT_CHARS = 4000;

const NONE: KeyAction = { type: 'none' };

export function keyAction(state: UiState, input: string, key: KeyInfo): KeyAction {
  const { interaction, gate } = state;
  if (key.ctrl && input === 'c') return interaction.over ? { type: 'quit' } : { type: 'interrupt' };
  if (state.view === 'fleet') return fleetKey(state, input, key);
  if (interaction.overlay) return overlayKey(state, interaction.overlay, input, key);
  if (!interaction.over && !interaction.confirmingAbort && gate && interaction.rejecting)
    return reasonKey(interaction.draft, input, key);
  const textGate = !interaction.over && !interaction.confirmingAbort && gate?.answer === 'text';
  const scroll = scrollCommand(input, key, textGate);
  if (scroll) return { type: 'scroll', command: scroll };
  if (input === '?' && !textGate && !key.ctrl && !key.meta)
    return { type: 'overlay', overlay: { kind: 'help' } };

  if (interaction.over) return overKey(state, input, key);
  if (interaction.confirmingAbort) {
    return input === 'y' || input === 'a' ? { type: 'abort_confirm' } : { type: 'abort_cancel' };
  }
  if (textGate) {
    if (gate?.gate === 'plan' && key.ctrl && input === 'p') return { type: 'answer', text: PROCEED };
    return textGateKey(interaction.draft, input, key);
  }
  return runningKey(state, input, key);
}

/** A key once the work is over: q or Esc leaves; Tab still switches the output between lanes; o and l read. */
function overKey(state: UiState, input: string, key: KeyInfo): KeyAction {
  if (input === 'q' || key.escape) return { type: 'quit' };
  if (key.tab) return laneKey(state);
  return readingKey(input, key) ?? { type: 'hint', text: 'The run is over: q leaves.' };
}

/** Tab: the next lane's output, and after the last one every line again (nothing without lanes). */
function laneKey(state: UiState): KeyAction {
  const lanes = outputLanes(state);
  if (lanes.length === 0) return NONE;
  const current = state.interaction.outputLane;
  const next = current === null ? lanes[0] : lanes[lanes.indexOf(current) + 1];
  return { type: 'output_lane', lane: next ?? null };
}

/** A key while something covers the panels: it acts on what covers them. */
function overlayKey(state: UiState, overlay: Overlay, input: string, key: KeyInfo): KeyAction {
  switch (overlay.kind) {
    case 'help':
      // The list of keys is read, then any key puts the screen back.
      return { type: 'overlay', overlay: null };
    case 'document':
      return documentKey(state, overlay.index, input, key);
    case 'output':
      return outputOverlayKey(input, key);
    case 'logs':
      return logListKey(overlay, input, key);
    case 'log':
      return logKey(overlay.entry, overlay.list, input, key);
  }
}

/**
 * Issue 20: the app watches what it does not run (the fleet view, a fleet run it is attached to):
 * q leaves and the fleet goes on; nothing here aborts or pauses a run.
 */
export function watchesTheFleet(state: UiState): boolean {
  return state.view === 'fleet' || state.remote !== null;
}

function fleetKey(state: UiState, input: string, key: KeyInfo): KeyAction {
  if (state.interaction.overlay?.kind === 'help') return { type: 'overlay', overlay: null };
  if (input === '?' && !key.ctrl && !key.meta) return { type: 'overlay', overlay: { kind: 'help' } };
  if (input === 'q' || key.escape) return state.interaction.over ? { type: 'quit' } : { type: 'interrupt' };
  return { type: 'hint', text: 'q leaves (the fleet goes on).' };
}

/** A key while the run goes on and no text is being typed: y/n at a gate, a to abort. */
function runningKey(state: UiState, input: string, key: KeyInfo): KeyAction {
  const { gate } = state;
  if (key.tab) return laneKey(state);
  if (gate?.answer === 'yes_no' && input === 'y') return { type: 'gate', decision: 'approve' };
  // A "no" an agent reads is confirmed, with room for why (the agent reads it on its next
  // attempt); at the resume and the planner's proceed question it decides at once.
  if (gate?.answer === 'yes_no' && input === 'n')
    return asksWhy(gate.gate) ? { type: 'reject_ask' } : { type: 'gate', decision: 'reject' };
  if (input === 'v' && (gate?.documents?.length ?? 0) > 0)
    return { type: 'overlay', overlay: { kind: 'document', index: 0, top: 0 } };
  if (watchesTheFleet(state)) {
    if (input === 'q') return { type: 'interrupt' };
    if (input === 'a' || input === 'p')
      return { type: 'hint', text: 'This run goes on in the fleet: q leaves it running.' };
    return NONE;
  }
  return stopKey(state, input, key);
}

/** a (abort), p (pause), q (not yet): what stops the run this process drives. */
function stopKey({ interaction, view }: UiState, input: string, key: KeyInfo): KeyAction {
  if (input === 'a') {
    return interaction.aborting
      ? {
          type: 'hint',
          text: `Already ${interaction.interrupting ? 'stopping' : 'aborting'}: Ctrl-C again force-quits.`,
        }
      : { type: 'abort_ask' };
  }
  if (input === 'p' && view === 'workflow' && !key.ctrl && !key.meta) {
    if (interaction.aborting)
      return { type: 'hint', text: 'Already stopping: the run ends without a pause.' };
    return interaction.pausing
      ? { type: 'hint', text: 'Already pausing: the run stops once the running agent finishes.' }
      : { type: 'pause' };
  }
  if (input === 'q') return { type: 'hint', text: 'q leaves once the run is over; a aborts it.' };
  return readingKey(input, key) ?? NONE;
}

/** o and l: reading what the agents said, whatever else goes on (never while text is typed). */
function readingKey(input: string, key: KeyInfo): KeyAction | null {
  if (key.ctrl || key.meta) return null;
  if (input === 'o') return { type: 'overlay', overlay: { kind: 'output' } };
  if (input === 'l') return { type: 'logs_open' };
  return null;
}

const CLOSE: KeyAction = { type: 'overlay', overlay: null };

/** All the output over the whole screen: the output's scroll keys; Esc, q or o goes back. */
function outputOverlayKey(input: string, key: KeyInfo): KeyAction {
  if (key.escape || input === 'q' || input === 'o') return CLOSE;
  const scroll = scrollCommand(input, key, false);
  if (scroll) return { type: 'scroll', command: scroll };
  if (input === ' ') return { type: 'scroll', command: 'page_down' };
  return NONE;
}

/** The list of agent runs: move, open one, read the list again, or leave. */
function logListKey(overlay: LogListOverlay, input: string, key: KeyInfo): KeyAction {
  if (key.escape || input === 'q' || input === 'l') return CLOSE;
  if (input === 'r') return { type: 'logs_open' };
  const entries = overlay.entries ?? [];
  const select = (index: number): KeyAction => {
    const selected = Math.max(0, Math.min(entries.length - 1, index));
    return selected === overlay.selected ? NONE : { type: 'overlay', overlay: { ...overlay, selected } };
  };
  if (key.upArrow || input === 'k') return select(overlay.selected - 1);
  if (key.downArrow || input === 'j') return select(overlay.selected + 1);
  if (key.pageUp) return select(overlay.selected - 10);
  if (key.pageDown) return select(overlay.selected + 10);
  if (key.home || input === 'g') return select(0);
  if (key.end || input === 'G') return select(entries.length - 1);
  const entry = entries[overlay.selected];
  if ((key.return || key.rightArrow) && entry) return { type: 'log_open', entry };
  return NONE;
}

/** One run's transcript in the viewer: scroll it, read it again, or go back to the list. */
function logKey(entry: AgentLogEntry, list: LogListOverlay, input: string, key: KeyInfo): KeyAction {
  if (key.escape || input === 'q' || key.leftArrow || input === 'h')
    return { type: 'overlay', overlay: list };
  if (input === 'r') return { type: 'log_open', entry, keepTop: true };
  if (input === ' ') return { type: 'document_scroll', command: 'page_down' };
  const scroll = scrollCommand(input, key, false);
  return scroll ? { type: 'document_scroll', command: scroll } : NONE;
}

function scrollCommand(input: string, key: KeyInfo, typing: boolean): ScrollCommand | null {
  if (key.pageUp) return 'page_up';
  if (key.pageDown) return 'page_down';
  if (key.home) return 'top';
  if (key.end) return 'bottom';
  if (key.upArrow) return 'line_up';
  if (key.downArrow) return 'line_down';
  if (typing || key.ctrl || key.meta) return null;
  return ({ k: 'line_up', j: 'line_down', g: 'top', G: 'bottom' } as const)[input as 'k'] ?? null;
}

function textGateKey(draft: string, input: string, key: KeyInfo): KeyAction {
  if (key.escape) return { type: 'gate', decision: 'reject' };
  // Ctrl-J arrives as a bare line feed; Alt-Enter as Enter with meta.
  if (input === '\n' || (key.return && key.meta)) return withDraft(`${draft}\n`);
  if (key.return) {
    // Line breaks the answer ends on (a paste's last one) say nothing: they are not sent.
    return draft.trim()
      ? { type: 'answer', text: draft.replace(/\n+$/, '') }
      : { type: 'hint', text: 'Type an answer first (Esc declines to answer).' };
  }
  return editDraft(draft, input, key);
}

function editDraft(draft: string, input: string, key: KeyInfo): KeyAction {
  if (key.backspace || key.delete) return withDraft([...draft].slice(0, -1).join(''));
  if (key.ctrl && input === 'u') return withDraft('');
  if (key.ctrl || key.meta || key.tab || input === '') return NONE;
  // A paste arrives as one chunk; its line breaks are part of the answer, not a submit. Said on
  // screen when the paste ends on one (the newcomer's pass, defect 30: Enter seemed not to send).
  const pasted = input.replace(/\r\n?/g, '\n');
  const typed = withDraft(draft + pasted);
  return [...input].length > 1 && pasted.endsWith('\n') ? { ...typed, hint: PASTED_NEWLINE } : typed;
}

/** Why a paste that ended with Enter was not sent. */
export const PASTED_NEWLINE =
  'Pasted text keeps its line breaks, the last one too: press Enter to send (Backspace drops it).';

function withDraft(draft: string): Extract<KeyAction, { type: 'draft' }> {
  return { type: 'draft', draft: draft.slice(0, MAX_DRAFT_CHARS) };
}

/** A key while a gate's document is open: scroll it, pick another, or close it. */
function documentKey(state: UiState, index: number, input: string, key: KeyInfo): KeyAction {
  const count = state.gate?.documents?.length ?? 0;
  if (key.escape || input === 'q' || input === 'v') return { type: 'overlay', overlay: null };
  const pick = (next: number): KeyAction => ({
    type: 'overlay',
    overlay: { kind: 'document', index: (next + count) % Math.max(1, count), top: 0 },
  });
  if (key.tab || key.rightArrow || input === 'l') return pick(index + 1);
  if (key.leftArrow || input === 'h') return pick(index - 1);
  const digit = /^[1-9]$/.test(input) ? Number(input) : 0;
  if (digit >= 1 && digit <= count) return pick(digit - 1);
  if (input === ' ') return { type: 'document_scroll', command: 'page_down' };
  const scroll = scrollCommand(input, key, false);
  if (scroll) return { type: 'document_scroll', command: scroll };
  if (input === 'y' || input === 'n')
    return { type: 'hint', text: 'Esc closes the viewer; then y approves, n rejects.' };
  return NONE;
}

/** A key while the human says why they reject: typed like an answer; Enter rejects, Esc goes back. */
function reasonKey(draft: string, input: string, key: KeyInfo): KeyAction {
  if (key.escape) return { type: 'reject_cancel' };
  if (input === '\n' || (key.return && key.meta)) return withDraft(`${draft}\n`);
  if (key.return) return { type: 'gate', decision: 'reject', reason: draft };
  return editDraft(draft, input, key);
}
