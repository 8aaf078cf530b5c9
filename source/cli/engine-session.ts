import { basename } from 'node:path';
import {
  EngineBus,
  type GatePort,
  killAllChildrenNow,
  listAgentTranscripts,
  readAgentTranscript,
  readUserPreferences,
  type StampedEvent,
  type UserPreferences,
} from '../engine/index.js';
import type { InkFrontEnd } from '../ui/index.js';
import { type Bell, bellFor } from './front-end/bell.js';
import { chooseFrontEnd } from './front-end/choose-front-end.js';
import { ndjsonReporter } from './front-end/ndjson-reporter.js';
import { formatPlain, plainReporter } from './front-end/plain-reporter.js';
import type { CommandIo } from './io.js';
import { installInterruptHandler } from './signals.js';

/**
 * What every command that drives the engine needs: a bus with the chosen front end attached
 * (the full-screen app, plain lines or NDJSON), and one owner of interrupts (first signal aborts,
 * second force-quits), all disposed once the work is over. With the app, Ctrl-C arrives as a key
 * (the terminal is in raw mode) and takes the same two steps.
 */
export interface EngineSession {
  readonly bus: EngineBus;
  /** Aborted by an interrupt (Ctrl-C, SIGTERM) or by the app's `a`. */
  readonly signal: AbortSignal;
  /** Aborted only by the app's `a` (confirmed): for a workflow, FAILED with reason aborted. */
  readonly userAbort: AbortSignal;
  /** True once the app's `p` was pressed: no further agent starts (a workflow stays resumable). */
  readonly pauseRequested: () => boolean;
  /** The app's keyboard gates when the app runs, else null (the command picks its own). */
  readonly appGates: GatePort | null;
}

export interface SessionOptions {
  readonly json: boolean;
  /** What an interrupt does, for the warning line. */
  readonly onInterrupt: string;
  /** Commands with a full-screen view; others always print lines. */
  readonly view?: View;
  readonly project?: string;
  /** The lines of a command that is not a run (the fleet worker's log), instead of the plain reporter's. */
  readonly reporter?: (io: CommandIo) => (event: StampedEvent) => void;
}

/** The events that end the work, whose plain lines close the summary printed after the app. */
/** The app's views; `fleet` is `relais fleet status` on a terminal (issue 20). */
type View = 'workflow' | 'loop' | 'fleet';

const SUMMARY_EVENTS: Record<View, string> = {
  workflow: 'run.finished',
  loop: 'loop.finished',
  // The fleet view is a reading of the database: nothing of it is worth keeping on the screen.
  fleet: 'none',
};

/** Error lines the summary keeps at most (the last ones). */
const SUMMARY_ERRORS = 20;

/**
 * What the summary printed on the normal screen holds: the errors logged on the way, each with
 * the "Fix:" line logged right after it, and the end of the work. A run that could not start
 * ("Cannot start: …", then "Fix: …") has no end event: without its errors the summary was empty.
 */
function summaryOf(view: View) {
  const errors: StampedEvent[] = [];
  const ends: StampedEvent[] = [];
  let afterError = false;
  return {
    take(event: StampedEvent): void {
      const isError = event.type === 'log' && event.level === 'error';
      if (event.type === SUMMARY_EVENTS[view]) ends.push(event);
      else if (isError || (afterError && event.type === 'log' && event.message.startsWith('Fix:'))) {
        errors.push(event);
        if (errors.length > SUMMARY_ERRORS) errors.shift();
      }
      afterError = isError;
    },
    lines(): string[] {
      return [...errors, ...ends].flatMap((event) => formatPlain(event) ?? []);
    },
  };
}

export async function withEngine<T>(
  io: CommandIo,
  options: SessionOptions,
  work: (session: EngineSession) => Promise<T>,
): Promise<T> {
  const bus = new EngineBus();
  surviveWriteErrors(io.stdout);
  const preferences = await readUserPreferences(io.env);
  warnAboutBrokenSettings(bus, preferences);
  const bell = bellFor(io, preferences.bell);
  const kind = options.view ? chooseFrontEnd(io, options.json) : options.json ? 'ndjson' : 'plain';
  const interrupts = installInterruptHandler((signal) => {
    bus.emit({
      type: 'log',
      level: 'warn',
      message: `${signal} received: ${options.onInterrupt} (press Ctrl-C again to force quit)`,
    });
  });
  const userAbort = new AbortController();
  const pause = { requested: false };
  const pauseRequested = () => pause.requested;
  if (kind !== 'ink' || !options.view) {
    const report = kind === 'ndjson' ? ndjsonReporter(io) : (options.reporter ?? plainReporter)(io);
    bus.subscribe((event) => {
      report(event);
      bell.take(event);
    });
    try {
      const result = await work({
        bus,
        signal: interrupts.signal,
        userAbort: userAbort.signal,
        pauseRequested,
        appGates: null,
      });
      endOfWork(bell, interrupts.signal);
      return result;
    } finally {
      interrupts.dispose();
    }
  }
  const summary = summaryOf(options.view);
  const view = options.view;
  const app = lazyApp(() =>
    startApp(io, { ...options, preferences }, view, { bus, appBus }, { userAbort, pause }, interrupts),
  );
  // Issue 16 item 4: an error before the work starts (not a repository, no PRD.md, claude missing)
  // is printed as plain text, not in the full-screen app. The app starts with the first event that
  // is not a log line (the work began: a phase, a tick, the resume question); until then the
  // events wait in the app's bus, whose backlog replays them to whichever front end takes them.
  const appBus = new EngineBus();
  // One subscriber: the bus replays its backlog to the first one only.
  bus.subscribe((event) => {
    summary.take(event);
    bell.take(event);
    // With its own time: a fleet run's events are replayed from the database (relais attach).
    appBus.replay(event);
    // A failure to start shows where the app is awaited (a gate, the end of the work).
    if (event.type !== 'log') app.start().catch(() => undefined);
  });
  const lazyGates: GatePort = {
    ask: async (request, signal) => (await app.start()).gates.ask(request, signal),
  };
  try {
    const signal = AbortSignal.any([interrupts.signal, userAbort.signal]);
    let result: T;
    try {
      result = await work({ bus, signal, userAbort: userAbort.signal, pauseRequested, appGates: lazyGates });
    } catch (error) {
      const started = app.started();
      // The work failed unexpectedly: leave at once, with what the run logged so far on the normal
      // screen, before the caller prints the error itself.
      // A failure to leave must not hide the work's own error.
      if (started)
        await (await started).finish(summary.lines(), { waitForQuit: false }).catch(() => undefined);
      else appBus.subscribe(plainReporter(io));
      throw error;
    }
    endOfWork(bell, interrupts.signal);
    const started = app.started();
    if (!started) {
      // Nothing but log lines: the work never began. They go out as plain text, nothing is kept on screen.
      appBus.subscribe(plainReporter(io));
      return result;
    }
    // After Ctrl-C or a signal the human asked to stop: leave at once, also when the signal comes
    // while the final screen shows (a SIGTERM then has no work left to abort). Otherwise the
    // final screen stays until q, so the result can be read.
    await (await started).finish(summary.lines(), { leaveOn: interrupts.signal });
    return result;
  } finally {
    const started = app.started();
    if (started) (await started.catch(() => null))?.restore();
    interrupts.dispose();
  }
}

/** Starts the app once, on first need; `started()` is null until then. */
function lazyApp(start: () => Promise<InkFrontEnd>) {
  let app: Promise<InkFrontEnd> | null = null;
  return {
    start: () => {
      app ??= start();
      return app;
    },
    started: () => app,
  };
}

/**
 * A broken settings file is not silently ignored: the run goes on without it (the project's
 * relais.config.json and the built-in defaults), and says so with the file's path.
 */
function warnAboutBrokenSettings(bus: EngineBus, preferences: UserPreferences): void {
  if (!preferences.problem) return;
  bus.emit({
    type: 'log',
    level: 'warn',
    message: `user settings ignored for this run: ${preferences.problem} (fix it with relais config set/unset, or edit the file)`,
  });
}

function endOfWork(bell: Bell, interrupted: AbortSignal): void {
  if (!interrupted.aborted) bell.end();
}

async function startApp(
  io: CommandIo,
  options: SessionOptions & { readonly preferences: UserPreferences },
  view: View,
  { bus, appBus }: { readonly bus: EngineBus; readonly appBus: EngineBus },
  { userAbort, pause }: { readonly userAbort: AbortController; readonly pause: { requested: boolean } },
  interrupts: ReturnType<typeof installInterruptHandler>,
): Promise<InkFrontEnd> {
  // Ink, React and the layout engine take about half a second to load: only when the app runs.
  const { startInkFrontEnd } = await import('../ui/index.js');
  const root = options.project ?? io.cwd;
  const app = startInkFrontEnd({
    bus: appBus,
    view,
    project: basename(options.project ?? io.cwd),
    // The app runs only when both are terminals (chooseFrontEnd): in a command, process.stdin/out.
    stdin: io.stdin as NodeJS.ReadStream,
    stdout: io.stdout as NodeJS.WriteStream,
    // The user's theme "none": no colours whatever the terminal; "auto" leaves it to NO_COLOR.
    ...(options.preferences.theme === 'none' ? { colors: false } : {}),
    onAbort: () => {
      bus.emit({
        type: 'log',
        level: 'warn',
        message: 'abort requested from the keyboard: stopping the agent',
      });
      userAbort.abort();
    },
    onPause: () => {
      pause.requested = true;
      bus.emit({
        type: 'log',
        level: 'warn',
        message:
          'pause requested from the keyboard: the running agent finishes, then the run stops (ralphy start resumes it)',
      });
    },
    onInterrupt: () => interrupts.interrupt('SIGINT'),
    // `l`: the agent runs the engine kept in the project's history (issue 16 item 11).
    agentLogs: {
      list: () => listAgentTranscripts(root, io.env),
      read: (id) => readAgentTranscript(root, io.env, id),
    },
    // A second Ctrl-C, the app's `a` then Ctrl-C: the same forced exit as a second signal.
    onForceQuit: () => interrupts.forceQuit(),
    killChildren: killAllChildrenNow,
  });
  interrupts.beforeForceQuit(app.restore);
  return app;
}

/**
 * A write to a closed terminal (EIO after a hang-up) or a closed pipe (EPIPE) fails
 * asynchronously, and an unheard stream error crashes the process: before the engine has stopped
 * its agents, rolled back and released the lock. Those lines have nowhere to go; the stop must
 * finish. The listener stays for the life of the process: the last lines' errors come after the
 * session is over.
 */
function surviveWriteErrors(stream: CommandIo['stdout']): void {
  const emitter = stream as Partial<NodeJS.EventEmitter>;
  if (typeof emitter.on !== 'function' || emitter.listeners?.('error').includes(ignoreWriteError)) return;
  emitter.on('error', ignoreWriteError);
}

function ignoreWriteError(): void {}
