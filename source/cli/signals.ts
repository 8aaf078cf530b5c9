import { killAllChildrenNow } from '../engine/supervise/run-process.js';
import { EXIT } from './exit-codes.js';

/**
 * One place owns interrupts (DESIGN style rule 3). The first SIGINT/SIGTERM aborts the engine's
 * AbortSignal: children are ended, the tick rolls back and reports. A second one force-quits at
 * once with 130: the cleanups registered with `beforeForceQuit` run first (the full-screen app
 * restores the terminal), then a synchronous SIGKILL of every child process group still running.
 */
export interface InterruptHandler {
  readonly signal: AbortSignal;
  /** The same two steps for an interrupt that arrives as a key (the full-screen app's Ctrl-C). */
  interrupt(signal: NodeJS.Signals): void;
  /** Quit now (the second interrupt, whichever way it came): cleanups, children killed, exit 130. */
  forceQuit(): void;
  /** Something to undo before a forced exit, e.g. restoring the terminal; run once, in order. */
  beforeForceQuit(cleanup: () => void): void;
  dispose(): void;
}

const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];

export function installInterruptHandler(onFirst: (signal: NodeJS.Signals) => void): InterruptHandler {
  const controller = new AbortController();
  const cleanups: Array<() => void> = [];
  let received = 0;
  let quitting = false;

  function forceQuit(): void {
    if (quitting) return;
    quitting = true;
    for (const cleanup of cleanups.splice(0)) {
      try {
        cleanup();
      } catch {
        // A cleanup that fails must not keep the children alive or the process running.
      }
    }
    killAllChildrenNow();
    process.exit(EXIT.INTERRUPTED);
  }

  const handler = (signal: NodeJS.Signals) => {
    received++;
    if (received === 1) {
      onFirst(signal);
      controller.abort(signal);
      return;
    }
    forceQuit();
  };
  for (const signal of SIGNALS) process.on(signal, handler);
  return {
    signal: controller.signal,
    interrupt: handler,
    forceQuit,
    beforeForceQuit(cleanup) {
      cleanups.push(cleanup);
    },
    dispose() {
      for (const signal of SIGNALS) process.off(signal, handler);
    },
  };
}
