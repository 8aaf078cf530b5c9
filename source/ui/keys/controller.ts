import type { Key } from 'ink';
import { KeyboardGates } from '../gates/keyboard-gates.js';
import { type AgentLogEntry, type AgentLogPort, logDocument } from '../logs/agent-logs.js';
import { outputRowsOf } from '../panels/AgentOutput.js';
import { clampTop, documentRows, shownDocument } from '../panels/DocumentViewer.js';
import { clampGateTop, gateViewIn } from '../panels/GatePanel.js';
import type { UiStore } from '../store/create-store.js';
import { type ScrollCommand, scrolledTop } from '../store/scroll.js';
import type { LogListOverlay, Overlay, UiState } from '../store/ui-state.js';
import { type KeyAction, keyAction } from './key-map.js';

export interface ViewerBox {
  readonly width: number;
  readonly height: number;
}

/**
 * Turns keys into effects: gate answers, abort requests, scrolling, leaving. The one place that
 * counts interrupts, so "first Ctrl-C aborts, second force-quits" holds whatever path came first
 * (an `a` + confirm counts as the first).
 */
export interface UiController {
  readonly gates: KeyboardGates;
  /**
   * `pageRows`: the output's page (PgUp/PgDn); `viewer`: the document viewer's text area, to keep
   * its scroll inside the document; `outputWidth`: the output's text columns (a long line wraps,
   * so a page holds fewer lines); `gate`: the gate panel's outer size, so a question too long for
   * it scrolls there instead of the output.
   */
  handleKey(
    input: string,
    key: Key,
    pageRows: number,
    viewer?: ViewerBox,
    outputWidth?: number,
    gate?: ViewerBox,
  ): void;
  /** The engine's work is over: `q` now leaves. */
  markOver(): void;
  /** Resolves when the human leaves (q, Esc or Ctrl-C once the work is over). */
  readonly quit: Promise<void>;
}

export interface UiControllerOptions {
  readonly store: UiStore;
  /** `a` confirmed: abort the running work (a workflow ends FAILED, reason aborted). */
  readonly onAbort: () => void;
  /** First Ctrl-C: stop gracefully (a workflow stays resumable); `onAbort` when not given. */
  readonly onInterrupt?: () => void;
  /** `p`: the running agent finishes, then no next one starts (a workflow; resumable). */
  readonly onPause?: () => void;
  readonly onForceQuit: () => void;
  /** The agent runs kept in history (`l`); without it the list says there are none to read. */
  readonly logs?: AgentLogPort;
}

export function createUiController(options: UiControllerOptions): UiController {
  const { store } = options;
  const gates = new KeyboardGates(store);
  let interrupts = 0;
  let leave: () => void = () => {};
  const quit = new Promise<void>((resolve) => {
    leave = resolve;
  });

  function interrupt(how: 'abort' | 'interrupt'): void {
    interrupts++;
    if (interrupts === 1) {
      store.setInteraction({
        aborting: true,
        interrupting: how === 'interrupt',
        confirmingAbort: false,
        hint: null,
      });
      if (how === 'abort') options.onAbort();
      else (options.onInterrupt ?? options.onAbort)();
      return;
    }
    options.onForceQuit();
  }

  function scrollDocument(
    state: UiState,
    action: Extract<KeyAction, { type: 'document_scroll' }>,
    box: ViewerBox,
  ) {
    const shown = shownDocument(state);
    const overlay = state.interaction.overlay;
    if (!shown || (overlay?.kind !== 'document' && overlay?.kind !== 'log')) return;
    const total = documentRows(shown.doc, box.width).length;
    const top = clampTop(scrolledTop(overlay.top, action.command, box.height, total), total, box.height);
    if (top !== overlay.top) store.setInteraction({ overlay: { ...overlay, top } });
  }

  /**
   * The scroll keys move the gate's question when the gate cannot show it whole (a small
   * terminal: the newcomer's pass, defect 9), the output otherwise. False when the output scrolls.
   */
  function scrollGate(command: ScrollCommand, box: ViewerBox | undefined): boolean {
    const state = store.getSnapshot().state;
    if (!box || state.interaction.over) return false;
    const view = gateViewIn(state, box.width, box.height);
    if (!view || view.total <= view.window) return false;
    const top = clampGateTop(
      scrolledTop(view.top, command, view.window, view.total),
      view.total,
      view.window,
    );
    if (top !== state.interaction.gateTop) store.setInteraction({ gateTop: top });
    return true;
  }

  /** The list of runs, if it still shows (a list read slowly must not reopen a closed one). */
  function shownList(): LogListOverlay | null {
    const overlay = store.getSnapshot().state.interaction.overlay;
    return overlay?.kind === 'logs' ? overlay : null;
  }

  function shownLog(): Extract<Overlay, { kind: 'log' }> | null {
    const overlay = store.getSnapshot().state.interaction.overlay;
    return overlay?.kind === 'log' ? overlay : null;
  }

  function openLogs(): void {
    const before = shownList();
    store.setInteraction({
      overlay: {
        kind: 'logs',
        entries: before?.entries ?? null,
        selected: before?.selected ?? 0,
        error: null,
      },
    });
    if (!options.logs) {
      store.setInteraction({
        overlay: { kind: 'logs', entries: [], selected: 0, error: 'no agent runs are kept for this command' },
      });
      return;
    }
    options.logs.list().then(
      (entries) => {
        const list = shownList();
        if (!list) return;
        const selected = Math.max(0, Math.min(list.selected, entries.length - 1));
        store.setInteraction({ overlay: { ...list, entries, selected, error: null } });
      },
      (error: unknown) => {
        const list = shownList();
        if (list) store.setInteraction({ overlay: { ...list, entries: [], error: messageOf(error) } });
      },
    );
  }

  function openLog(entry: AgentLogEntry, keepTop: boolean): void {
    const open = shownLog();
    const list = open?.list ?? shownList();
    if (!list || !options.logs) return;
    options.logs.read(entry.id).then(
      (text) => {
        // Still where the human asked for it: the list, or this transcript (read again).
        const now = store.getSnapshot().state.interaction.overlay;
        if (now?.kind !== 'logs' && !(now?.kind === 'log' && now.entry.id === entry.id)) return;
        const top = keepTop && now.kind === 'log' ? now.top : 0;
        store.setInteraction({
          overlay: { kind: 'log', entry, document: logDocument(entry, text), top, list },
        });
      },
      (error: unknown) => {
        if (shownList() || shownLog())
          store.setInteraction({ overlay: { ...list, error: `${entry.path}: ${messageOf(error)}` } });
      },
    );
  }

  /** The rows each shown line takes, tagged with its lane when every lane's lines are mixed. */
  function outputRowsNow(outputWidth: number) {
    const snapshot = store.getSnapshot();
    const { lanes, interaction } = snapshot.state;
    const tagged = lanes.rows.length > 0 && interaction.outputLane === null;
    return outputRowsOf(snapshot.output, outputWidth, tagged);
  }

  function apply(
    action: KeyAction,
    pageRows: number,
    viewer: ViewerBox,
    outputWidth: number,
    gateBox?: ViewerBox,
  ): void {
    switch (action.type) {
      case 'interrupt':
        interrupt('interrupt');
        break;
      case 'abort_confirm':
        interrupt('abort');
        break;
      case 'quit':
        leave();
        break;
      case 'gate':
        gates.answer({
          decision: action.decision,
          by: 'human',
          ...(action.reason?.trim() ? { reason: action.reason.trim() } : {}),
        });
        break;
      case 'reject_ask':
        store.setInteraction({ rejecting: true, draft: '' });
        break;
      case 'reject_cancel':
        store.setInteraction({ rejecting: false, draft: '' });
        break;
      case 'overlay':
        store.setInteraction({ overlay: action.overlay });
        break;
      case 'document_scroll':
        scrollDocument(store.getSnapshot().state, action, viewer);
        break;
      case 'answer':
        gates.answer({ decision: 'answer', by: 'human', text: action.text });
        break;
      case 'draft':
        store.setInteraction({ draft: action.draft, ...(action.hint ? { hint: action.hint } : {}) });
        break;
      case 'abort_ask':
        store.setInteraction({ confirmingAbort: true });
        break;
      case 'pause':
        store.setInteraction({ pausing: true });
        options.onPause?.();
        break;
      case 'abort_cancel':
        store.setInteraction({ confirmingAbort: false });
        break;
      case 'scroll':
        if (scrollGate(action.command, gateBox)) break;
        store.scroll(action.command, pageRows, outputRowsNow(outputWidth));
        break;
      case 'logs_open':
        openLogs();
        break;
      case 'log_open':
        openLog(action.entry, action.keepTop === true);
        break;
      case 'output_lane':
        store.showOutput(action.lane);
        break;
      case 'hint':
        store.setInteraction({ hint: action.text });
        break;
      case 'none':
        break;
    }
  }

  return {
    gates,
    quit,
    handleKey(
      input,
      key,
      pageRows,
      viewer = { width: 80, height: Math.max(1, pageRows) },
      outputWidth = 1000,
      gateBox?: ViewerBox,
    ) {
      const state = store.getSnapshot().state;
      const action = keyAction(state, input, key);
      // A hint answers the key just pressed; the next key clears it.
      if (
        state.interaction.hint !== null &&
        action.type !== 'hint' &&
        !(action.type === 'draft' && action.hint)
      )
        store.setInteraction({ hint: null });
      apply(action, pageRows, viewer, outputWidth, gateBox);
    },
    markOver() {
      store.setInteraction({ over: true, confirmingAbort: false, hint: null });
    },
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
