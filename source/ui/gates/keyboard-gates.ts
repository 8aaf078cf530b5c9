import type { GateAnswer, GatePort, GateRequest } from '../../engine/gates.js';
import type { UiStore } from '../store/create-store.js';
import { gateOrigin } from '../store/reduce-lanes.js';
import type { UiState } from '../store/ui-state.js';

/**
 * The app's GatePort: the engine asks, the gate shows in the app, a key answers. Gates queue (the
 * engine asks one at a time, but nothing breaks if it does not). An aborted signal, or the app
 * closing, answers "reject, by nobody" so the engine never waits on a screen that is gone.
 */

const NOBODY: GateAnswer = { decision: 'reject', by: 'nobody' };

interface Pending {
  readonly request: GateRequest;
  readonly resolve: (answer: GateAnswer) => void;
  readonly detach: () => void;
}

export class KeyboardGates implements GatePort {
  private readonly queue: Pending[] = [];

  constructor(private readonly store: UiStore) {}

  ask(request: GateRequest, signal: AbortSignal): Promise<GateAnswer> {
    if (signal.aborted) return Promise.resolve(NOBODY);
    return new Promise<GateAnswer>((resolve) => {
      const onAbort = () => this.settle(pending, NOBODY);
      const pending: Pending = {
        request,
        resolve,
        detach: () => signal.removeEventListener('abort', onAbort),
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.queue.push(pending);
      if (this.queue.length === 1) this.show(request);
    });
  }

  /** The gate on screen, if the engine is waiting for it. */
  get current(): GateRequest | null {
    return this.queue[0]?.request ?? null;
  }

  /** Answers the gate on screen; false when no gate is waiting. */
  answer(answer: GateAnswer): boolean {
    const head = this.queue[0];
    if (!head) return false;
    this.settle(head, answer);
    return true;
  }

  /** The app is closing: nobody will answer what is still waiting. */
  cancelAll(): void {
    while (this.queue[0]) this.settle(this.queue[0], NOBODY);
  }

  private settle(pending: Pending, answer: GateAnswer): void {
    const index = this.queue.indexOf(pending);
    if (index < 0) return;
    this.queue.splice(index, 1);
    pending.detach();
    if (index === 0) {
      const next = this.queue[0];
      if (next) this.show(next.request);
      else this.store.interact((s) => ({ ...s, gate: null, interaction: freshGateInteraction(s) }));
    }
    pending.resolve(answer);
  }

  private show(request: GateRequest): void {
    this.store.interact((s) => ({
      ...s,
      gate: {
        gate: request.gate,
        title: request.title,
        lines: [...request.lines],
        answer: request.answer,
        documents: [...(request.documents ?? [])],
        lane: request.lane ?? null,
        origin: gateOrigin(s, request.lane),
      },
      interaction: freshGateInteraction(s),
    }));
  }
}

/** Nothing typed, no reason asked, the question from its top: how each gate starts and ends. */
function freshGateInteraction(s: UiState): UiState['interaction'] {
  return { ...s.interaction, draft: '', rejecting: false, gateTop: 0, overlay: withoutDocument(s) };
}

/** A document belongs to the gate it came with: it closes with it. */
function withoutDocument(state: UiState): UiState['interaction']['overlay'] {
  return state.interaction.overlay?.kind === 'document' ? null : state.interaction.overlay;
}
