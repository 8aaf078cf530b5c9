import type { Key } from 'ink';
import { KeyboardGates } from '../gates/keyboard-gates.js';
import { clampTop, documentRows } from '../panels/DocumentViewer.js';
import type { UiStore } from '../store/create-store.js';
import { scrolledTop } from '../store/scroll.js';
import type { UiState } from '../store/ui-state.js';
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
   * its scroll inside the document.
   */
  handleKey(input: string, key: Key, pageRows: number, viewer?: ViewerBox): void;
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
    const overlay = state.interaction.overlay;
    const doc = overlay?.kind === 'document' ? state.gate?.documents?.[overlay.index] : undefined;
    if (!doc || overlay?.kind !== 'document') return;
    const total = documentRows(doc, box.width).length;
    const top = clampTop(scrolledTop(overlay.top, action.command, box.height, total), total, box.height);
    if (top !== overlay.top) store.setInteraction({ overlay: { ...overlay, top } });
  }

  function apply(action: KeyAction, pageRows: number, viewer: ViewerBox): void {
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
        store.setInteraction({ draft: action.draft });
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
        store.scroll(action.command, pageRows);
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
    handleKey(input, key, pageRows, viewer = { width: 80, height: Math.max(1, pageRows) }) {
      const state = store.getSnapshot().state;
      const action = keyAction(state, input, key);
      // A hint answers the key just pressed; the next key clears it.
      if (state.interaction.hint !== null && action.type !== 'hint') store.setInteraction({ hint: null });
      apply(action, pageRows, viewer);
    },
    markOver() {
      store.setInteraction({ over: true, confirmingAbort: false, hint: null });
    },
  };
}
