import { closeSync } from 'node:fs';
import { isatty } from 'node:tty';
import { killAllChildrenNow } from '../engine/index.js';
import { EXIT } from './exit-codes.js';

/**
 * One place owns interrupts (docs/ARCHITECTURE.md, style rule 3). The first SIGINT/SIGTERM/SIGHUP aborts the
 * engine's AbortSignal: children are ended, the tick rolls back and reports, the lock is released.
 * A second SIGINT/SIGTERM force-quits at once with 130: the cleanups registered with
 * `beforeForceQuit` run first (the full-screen app restores the terminal), then a synchronous
 * SIGKILL of every child process group still running.
 *
 * SIGHUP is the terminal closing. Node's default is to die at once, without an 'exit' event: the
 * agents (in their own process groups) would run on and the lock would stay. A hang-up can come
 * more than once (the kernel, then the shell passing it on), and nobody is there to insist, so a
 * repeated SIGHUP never force-quits: the graceful stop finishes.
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

const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export function installInterruptHandler(onFirst: (signal: NodeJS.Signals) => void): InterruptHandler {
  const controller = new AbortController();
  const cleanups: Array<() => void> = [];
  let received = 0;
  let quitting = false;
  let hungUp = false;

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
    if (signal === 'SIGHUP') {
      if (!hungUp) process.once('exit', closeHungUpTerminal);
      hungUp = true;
      if (received > 0) return;
    }
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

/**
 * Ends the process now with `code`, every child process group still running killed first: for a
 * command whose engine leaves work behind that must not go on once the command is over (the fleet
 * worker: DBOS's timers, and steps that now belong to a restarted or surviving worker).
 */
export function leaveNow(code: number): never {
  killAllChildrenNow();
  process.exit(code);
}

/**
 * After a hang-up, Node 20's own exit step resets the terminal it started on and aborts (a core
 * dump, exit 134) when that fails, which it does on a closed terminal (nodejs/node#51519, fixed
 * upstream by #58200). A descriptor closed before that step is skipped: close those whose
 * terminal is gone (it was a TTY at start and no longer answers as one), never a live one.
 */
function closeHungUpTerminal(): void {
  const streams = [process.stdin, process.stdout, process.stderr];
  streams.forEach((stream, fd) => {
    if (!(stream as { isTTY?: boolean }).isTTY || isatty(fd)) return;
    try {
      closeSync(fd);
    } catch {
      // Already closed: nothing left for the exit step to trip on.
    }
  });
}
