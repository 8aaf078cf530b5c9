import { type Instance, render } from 'ink';
import type { EngineBus } from '../engine/events.js';
import { denyAll, type GatePort } from '../engine/gates.js';
import { App } from './components/App.js';
import { captureConsole } from './console-capture.js';
import { createUiController } from './keys/controller.js';
import type { AgentLogPort } from './logs/agent-logs.js';
import { createUiStore } from './store/create-store.js';
import type { UiView } from './store/ui-state.js';
import {
  CLEAR_SCREEN,
  ENTER_ALTERNATE_SCREEN,
  LEAVE_ALTERNATE_SCREEN,
  leaveRawMode,
  safeWrite,
} from './terminal.js';
import { colorsWanted } from './theme.js';

export interface InkFrontEnd {
  /** Answers the engine's gates from keys (y/n, typed answers). */
  readonly gates: GatePort;
  /**
   * Call when the engine's work is over: keeps the final screen until the user presses q (or
   * resolves at once when `waitForQuit` is false, or when `leaveOn` is or becomes aborted: a
   * signal that arrives while the final screen shows must not wait for a second one), then
   * leaves the alternate screen, restores the terminal, and prints `summary` lines to the normal
   * screen. Idempotent.
   */
  finish(summary: string[], options?: { waitForQuit?: boolean; leaveOn?: AbortSignal }): Promise<void>;
  /** Restore the terminal now (crash / signal path); idempotent, synchronous. */
  restore(): void;
}

export interface InkFrontEndOptions {
  readonly bus: EngineBus;
  readonly view: UiView;
  readonly project: string;
  /** `a` confirmed: abort the running work. */
  readonly onAbort: () => void;
  /** First Ctrl-C: stop gracefully; `onAbort` when not given. */
  readonly onInterrupt?: () => void;
  /** `p`: let the running agent finish, then stop before the next one (a workflow; resumable). */
  readonly onPause?: () => void;
  /** Second Ctrl-C: quit now. */
  readonly onForceQuit: () => void;
  /**
   * The app crashed: end the agents' process groups at once (the engine's own cleanup will not
   * run). The command passes the engine's kill; the UI never reaches into the process layer.
   */
  readonly killChildren: () => void;
  readonly stdin?: NodeJS.ReadStream;
  readonly stdout?: NodeJS.WriteStream;
  readonly env?: NodeJS.ProcessEnv;
  /** False: never colours (the user's theme "none"); otherwise NO_COLOR in `env` decides. */
  readonly colors?: boolean;
  /** Spinners move (default true; false for screenshots and tests). */
  readonly animate?: boolean;
  /** The agent runs kept in history, for `l` (issue 16 item 11). */
  readonly agentLogs?: AgentLogPort;
}

/**
 * Starts the full-screen app. This is the one place that owns the terminal: it enters the
 * alternate screen, and `restore` (run once, on every path: finish, crash, process exit) puts
 * everything back. The engine only ever talks to it through the bus and the gate port.
 */
export function startInkFrontEnd(options: InkFrontEndOptions): InkFrontEnd {
  const stdout = options.stdout ?? process.stdout;
  const stdin = options.stdin ?? process.stdin;
  const env = options.env ?? process.env;
  const store = createUiStore({ view: options.view, project: options.project });
  const controller = createUiController({
    store,
    onAbort: options.onAbort,
    onInterrupt: options.onInterrupt,
    onPause: options.onPause,
    onForceQuit: options.onForceQuit,
    ...(options.agentLogs ? { logs: options.agentLogs } : {}),
  });

  let restored = false;
  let ink: Instance | null = null;
  let unsubscribe = () => {};
  let releaseConsole = () => {};
  let markRestored: () => void = () => {};
  const restoredSignal = new Promise<void>((resolve) => {
    markRestored = resolve;
  });
  // Registered before Ink's own resize handler, so the stale frame is gone before the redraw.
  const onResize = () => safeWrite(stdout, CLEAR_SCREEN);
  const clock = setInterval(() => store.tick(), 1000);
  clock.unref();
  // A crash ends the process with no graceful stop: the agents run in their own process groups
  // and would outlive it (docs/ARCHITECTURE.md, style rule 3: restore the terminal, kill the children).
  const onCrash = () => {
    restore();
    options.killChildren();
  };
  // A closed terminal (a hang-up) fails every write with EIO, asynchronously: unheard, that error
  // would crash the process before the engine has stopped its agents and released the lock.
  // Nothing can be drawn any more, so the app goes. These stay after `restore`: Ink's last write
  // and the summary can fail the same way.
  const onTerminalGone = () => restore();

  function restore(): void {
    if (restored) return;
    restored = true;
    clearInterval(clock);
    unsubscribe();
    releaseConsole();
    controller.gates.cancelAll();
    try {
      ink?.unmount();
    } catch {
      // A failing unmount must not keep the terminal in raw mode on the alternate screen.
    }
    stdout.off('resize', onResize);
    leaveRawMode(stdin);
    safeWrite(stdout, LEAVE_ALTERNATE_SCREEN);
    store.dispose();
    process.off('exit', restore);
    process.off('uncaughtExceptionMonitor', onCrash);
    markRestored();
  }

  // The hooks go in before anything touches the terminal, so every later failure restores it.
  process.on('exit', restore);
  // The monitor runs before Node prints the crash, without swallowing it: the stack trace lands
  // on the normal screen, after the terminal is back.
  process.on('uncaughtExceptionMonitor', onCrash);
  stdout.on('error', onTerminalGone);
  stdin.on('error', onTerminalGone);
  safeWrite(stdout, ENTER_ALTERNATE_SCREEN);
  stdout.on('resize', onResize);
  try {
    releaseConsole = captureConsole(store);
    ink = render(
      <App
        store={store}
        controller={controller}
        colors={options.colors !== false && colorsWanted(env)}
        animate={options.animate ?? true}
      />,
      { stdout, stdin, exitOnCtrlC: false, patchConsole: false, maxFps: 30 },
    );
    unsubscribe = options.bus.subscribe(store.dispatch);
  } catch (error) {
    restore();
    throw error;
  }

  let finishing: Promise<void> | null = null;
  return {
    // Without a keyboard (stdin not a terminal) nobody can answer: refuse rather than wait forever.
    gates: stdin.isTTY ? controller.gates : denyAll,
    restore,
    finish(summary, finishOptions = {}) {
      finishing ??= (async () => {
        if (!restored) {
          store.flush();
          controller.markOver();
          const leaveOn = finishOptions.leaveOn;
          if (finishOptions.waitForQuit !== false && !leaveOn?.aborted)
            await Promise.race([controller.quit, restoredSignal, ...(leaveOn ? [aborted(leaveOn)] : [])]);
        }
        restore();
        for (const line of summary) safeWrite(stdout, `${line}\n`);
      })();
      return finishing;
    },
  };
}

/** Resolves once `signal` aborts (the listener goes with it). */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
