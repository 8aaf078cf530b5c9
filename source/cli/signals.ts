import { killAllChildrenNow } from '../engine/supervise/run-process.js';
import { EXIT } from './exit-codes.js';

/**
 * One place owns interrupts (DESIGN style rule 3). The first SIGINT/SIGTERM aborts the engine's
 * AbortSignal: children are ended, the tick rolls back and reports. A second one force-quits at
 * once with 130, after a synchronous SIGKILL of every child process group still running.
 */
export function installInterruptHandler(onFirst: (signal: NodeJS.Signals) => void): {
  signal: AbortSignal;
  /** The same two steps for an interrupt that arrives as a key (the full-screen app's Ctrl-C). */
  interrupt(signal: NodeJS.Signals): void;
  dispose(): void;
} {
  const controller = new AbortController();
  let received = 0;
  const handler = (signal: NodeJS.Signals) => {
    received++;
    if (received === 1) {
      onFirst(signal);
      controller.abort(signal);
      return;
    }
    killAllChildrenNow();
    process.exit(EXIT.INTERRUPTED);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    signal: controller.signal,
    interrupt: handler,
    dispose() {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}
