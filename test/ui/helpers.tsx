import { EventEmitter } from 'node:events';
import { render } from 'ink-testing-library';
import type { ReactElement } from 'react';
import type { EngineEvent, StampedEvent, WorkflowChangedEvent } from '../../source/engine/events.js';
import { App } from '../../source/ui/components/App.js';
import { createUiController, type UiController } from '../../source/ui/keys/controller.js';
import type { KeyInfo } from '../../source/ui/keys/key-map.js';
import { createUiStore, type StoreTimers, type UiStore } from '../../source/ui/store/create-store.js';
import type { UiView } from '../../source/ui/store/ui-state.js';
import { COLOR_PALETTE, NO_COLOR_PALETTE } from '../../source/ui/theme.js';
import { UiOptionsContext } from '../../source/ui/ui-context.js';

/** 2025-01-01 10:00:00 UTC: every scripted run starts here. */
export const T0 = Date.UTC(2025, 0, 1, 10, 0, 0);

// biome-ignore lint/suspicious/noControlCharactersInRegex: stripping escape sequences is the point
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

/** Lets pending promise callbacks run (every microtask has run when an immediate fires). */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Resolves when `frame()` passes `test`, checking at once and after every frame written. React
 * renders a store notification asynchronously (and may split the work under load), so a test
 * waits for the frame it expects instead of guessing when it lands.
 */
export function frameMatching(
  frames: EventEmitter,
  frame: () => string,
  test: (frame: string) => boolean,
  what: string,
  timeoutMs = 5000,
): Promise<void> {
  if (test(frame())) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      frames.off('frame', check);
      reject(new Error(`no frame with ${what}; last frame:\n${frame()}`));
    }, timeoutMs);
    const check = () => {
      if (!test(frame())) return;
      clearTimeout(timer);
      frames.off('frame', check);
      resolve();
    };
    frames.on('frame', check);
  });
}

/** A frame without escape codes, for text assertions. */
export function plain(frame: string | undefined): string {
  return (frame ?? '').replace(ANSI, '');
}

/**
 * Timers under the test's control: time moves only when the test says so, and a scheduled flush
 * runs only on `runDue` (so batching is observable without sleeping).
 */
export class ManualTimers implements StoreTimers {
  nowMs = T0;
  private readonly queue: Array<{ at: number; callback: () => void; id: number }> = [];
  private nextId = 0;

  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.queue.push({ at: this.nowMs + ms, callback, id });
    return id;
  }
  clearTimeout(handle: unknown): void {
    const index = this.queue.findIndex((t) => t.id === handle);
    if (index >= 0) this.queue.splice(index, 1);
  }
  now(): number {
    return this.nowMs;
  }
  get pending(): number {
    return this.queue.length;
  }
  /** Moves the clock and runs what became due. */
  advance(ms: number): void {
    this.nowMs += ms;
    for (const timer of this.queue.filter((t) => t.at <= this.nowMs)) {
      this.clearTimeout(timer.id);
      timer.callback();
    }
  }
}

/** A store driven by a script of events, each stamped with the script's clock. */
export class Script {
  readonly timers = new ManualTimers();
  readonly store: UiStore;

  constructor(view: UiView = 'workflow', options: { outputCap?: number } = {}) {
    this.store = createUiStore({ view, project: 'demo', timers: this.timers, outputCap: options.outputCap });
  }

  /** Emits events at the current time, then lets `afterMs` pass. */
  emit(events: EngineEvent | EngineEvent[], afterMs = 0): this {
    for (const event of Array.isArray(events) ? events : [events]) this.store.dispatch(this.stamp(event));
    if (afterMs > 0) this.timers.nowMs += afterMs;
    return this;
  }

  /** Lets time pass without events (clock tick). */
  wait(ms: number): this {
    this.timers.nowMs += ms;
    this.store.tick();
    return this;
  }

  stamp(event: EngineEvent): StampedEvent {
    return { ...event, at: new Date(this.timers.nowMs).toISOString() } as StampedEvent;
  }

  /** Notifies now (tests do not wait for the 100 ms batch unless they test it). */
  get snapshot() {
    this.store.flush();
    return this.store.getSnapshot();
  }

  get state() {
    return this.snapshot.state;
  }
}

/** A panel rendered with fixed options: no animation, colours on or off. */
export function renderPanel(element: ReactElement, colors = false) {
  const wrap = (node: ReactElement) => (
    <UiOptionsContext.Provider value={{ palette: colors ? COLOR_PALETTE : NO_COLOR_PALETTE, animate: false }}>
      {node}
    </UiOptionsContext.Provider>
  );
  const view = render(wrap(element));
  return {
    frame: () => plain(view.lastFrame()),
    rawFrame: () => view.lastFrame() ?? '',
    rerender: (next: ReactElement) => view.rerender(wrap(next)),
    unmount: view.unmount,
  };
}

export interface RenderedApp {
  readonly frame: () => string;
  readonly rawFrame: () => string;
  /** Resolves once a frame passes `test` (see frameMatching). */
  /** `timeoutMs` (5 s by default) is for waits on a real agent process, slower on a loaded machine. */
  readonly waitFor: (
    test: string | ((frame: string) => boolean),
    what?: string,
    timeoutMs?: number,
  ) => Promise<void>;
  readonly press: (data: string) => void;
  /** Frames Ink has written so far. */
  readonly writes: () => number;
  readonly controller: UiController;
  readonly unmount: () => void;
}

/** The whole app at a fixed size (ink-testing-library's stdout is 100 columns wide). */
export function renderApp(
  store: UiStore,
  options: {
    columns?: number;
    rows?: number;
    colors?: boolean;
    onAbort?: () => void;
    onForceQuit?: () => void;
    controller?: UiController;
  } = {},
): RenderedApp {
  const controller =
    options.controller ??
    createUiController({
      store,
      onAbort: options.onAbort ?? (() => {}),
      onForceQuit: options.onForceQuit ?? (() => {}),
    });
  const view = render(
    <App
      store={store}
      controller={controller}
      columns={options.columns ?? 100}
      rows={options.rows ?? 30}
      colors={options.colors ?? false}
      animate={false}
    />,
  );
  // Announce every frame Ink writes, so tests can wait for the one they expect.
  const frames = new EventEmitter();
  const write = view.stdout.write;
  let writes = 0;
  view.stdout.write = (data: string) => {
    write(data);
    writes++;
    frames.emit('frame');
  };
  const frame = () => plain(view.lastFrame());
  return {
    frame,
    rawFrame: () => view.lastFrame() ?? '',
    waitFor: (test, what, timeoutMs) =>
      typeof test === 'string'
        ? frameMatching(frames, frame, (f) => f.includes(test), what ?? JSON.stringify(test), timeoutMs)
        : frameMatching(frames, frame, test, what ?? 'the expected content', timeoutMs),
    press: (data) => view.stdin.write(data),
    writes: () => writes,
    controller,
    unmount: view.unmount,
  };
}

/** No modifier or special key: spread it and set the one a test presses. */
export const NO_KEY: KeyInfo = {
  upArrow: false,
  downArrow: false,
  pageUp: false,
  pageDown: false,
  home: false,
  end: false,
  return: false,
  escape: false,
  ctrl: false,
  meta: false,
  backspace: false,
  delete: false,
  tab: false,
};

/** The engine entering a workflow state, as the reducer sees it. */
export const enter = (
  state: WorkflowChangedEvent['state'],
  status: 'running' | 'waiting' | 'interrupted' = 'running',
): EngineEvent => ({ type: 'workflow.changed', state, status, reason: null, detail: null });

export const KEY = {
  enter: '\r',
  ctrlC: '\u0003',
  ctrlJ: '\n',
  altEnter: '\u001b\r',
  escape: '\u001b',
  backspace: '\u007f',
  pageUp: '\u001b[5~',
  pageDown: '\u001b[6~',
  up: '\u001b[A',
  down: '\u001b[B',
  home: '\u001b[H',
  end: '\u001b[F',
} as const;

/** A terminal for the front end's lifecycle tests: records writes, raw mode, and can resize. */
export class FakeTerminal {
  readonly stdout: FakeStdout;
  readonly stdin = new FakeStdin();

  constructor(columns = 100, rows = 30) {
    this.stdout = new FakeStdout(columns, rows);
  }
}

export class FakeStdout extends EventEmitter {
  readonly isTTY = true;
  readonly writes: string[] = [];
  writable = true;
  destroyed = false;

  constructor(
    public columns: number,
    public rows: number,
  ) {
    super();
  }

  write = (data: string | Uint8Array, callback?: () => void): boolean => {
    this.writes.push(typeof data === 'string' ? data : Buffer.from(data).toString('utf8'));
    this.emit('written');
    callback?.();
    return true;
  };

  get output(): string {
    return this.writes.join('');
  }

  resize(columns: number, rows: number): void {
    this.columns = columns;
    this.rows = rows;
    this.emit('resize');
  }

  /** Resolves at the first write (from now on) for which `test` holds on everything written. */
  waitFor(test: (output: string) => boolean, what = 'the expected output'): Promise<void> {
    if (test(this.output)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('written', check);
        reject(new Error(`timed out waiting for ${what}; last write: ${JSON.stringify(this.writes.at(-1))}`));
      }, 5000);
      const check = () => {
        if (!test(this.output)) return;
        clearTimeout(timer);
        this.off('written', check);
        resolve();
      };
      this.on('written', check);
    });
  }
}

export class FakeStdin extends EventEmitter {
  readonly isTTY = true;
  rawMode = false;
  readonly rawModeCalls: boolean[] = [];
  private data: string | null = null;

  setRawMode(enabled: boolean): this {
    this.rawMode = enabled;
    this.rawModeCalls.push(enabled);
    return this;
  }
  setEncoding(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
  resume(): this {
    return this;
  }
  pause(): this {
    return this;
  }
  read = (): string | null => {
    const { data } = this;
    this.data = null;
    return data;
  };
  /** Types `data` as the terminal would send it. */
  press(data: string): void {
    this.data = data;
    this.emit('readable');
  }
}
