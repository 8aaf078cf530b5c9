import type { StampedEvent } from '../../engine/events.js';
import { LineBuffer } from './line-buffer.js';
import { type OutputLine, outputLinesOf } from './output-lines.js';
import { reduceUi } from './reduce.js';
import { type LineRows, type ScrollCommand, type ScrollPosition, scrollAnchor } from './scroll.js';
import { clockStands } from './selectors.js';
import { type InteractionModel, initialUiState, type UiState, type UiView } from './ui-state.js';

/**
 * The one store between the engine's bus and the panels. Events are reduced as they come (any
 * rate), but listeners are notified at most once per `flushIntervalMs`: a burst of output costs
 * one redraw, not one per line. Key-driven changes notify at once, so keys feel instant.
 */

export interface OutputSnapshot {
  readonly buffer: LineBuffer<OutputLine>;
  readonly firstSeq: number;
  readonly lastSeq: number;
  readonly dropped: number;
  /** Bottom row of the view, or null to follow the newest line. */
  readonly anchor: ScrollPosition | null;
}

export interface UiSnapshot {
  readonly state: UiState;
  readonly output: OutputSnapshot;
}

/** Timers the store uses; tests pass fake ones (or use vitest's fake timers with the defaults). */
export interface StoreTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  now(): number;
}

export interface UiStoreOptions {
  readonly view?: UiView;
  readonly project?: string;
  /** Kept output lines (the oldest are dropped first). */
  readonly outputCap?: number;
  readonly flushIntervalMs?: number;
  readonly timers?: StoreTimers;
}

export interface UiStore {
  dispatch(event: StampedEvent): void;
  /**
   * Issue 19: the Output panel shows one lane's lines (or every line, null); the view follows the
   * newest line of what it now shows.
   */
  showOutput(lane: string | null): void;
  /** The clock moved (elapsed times, countdowns): redraw at the next flush, unless the work is over. */
  tick(): void;
  getSnapshot(): UiSnapshot;
  subscribe(listener: () => void): () => void;
  /** Change interaction state (keys, gates) and notify at once. */
  interact(change: (state: UiState) => UiState): void;
  setInteraction(patch: Partial<InteractionModel>): void;
  /** `rowsOf`: the rows each line takes on screen (wrapped lines make a page hold fewer). */
  scroll(command: ScrollCommand, pageRows: number, rowsOf?: LineRows): void;
  /** Notify now if anything changed since the last notification. */
  flush(): void;
  /** Flushes so far (a frame counter for tests and the benchmark). */
  readonly flushes: number;
  dispose(): void;
}

export const DEFAULT_OUTPUT_CAP = 5000;
/** Lines kept per parallel lane, and how many lanes keep their own lines (the newest lanes). */
export const LANE_OUTPUT_CAP = 2000;
export const KEPT_LANE_OUTPUTS = 32;
export const DEFAULT_FLUSH_INTERVAL_MS = 100;

// Read the globals at call time, so vitest's fake timers apply to a store built before them.
const realTimers: StoreTimers = {
  setTimeout: (callback, ms) => {
    const handle = globalThis.setTimeout(callback, ms);
    handle.unref?.();
    return handle;
  },
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
  now: () => Date.now(),
};

export function createUiStore(options: UiStoreOptions = {}): UiStore {
  const timers = options.timers ?? realTimers;
  const interval = options.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS;
  const buffer = new LineBuffer<OutputLine>(options.outputCap ?? DEFAULT_OUTPUT_CAP);
  // Each lane's lines on their own too, so the panel can show one lane without searching all.
  const laneBuffers = new Map<string, LineBuffer<OutputLine>>();
  const laneCap = Math.min(LANE_OUTPUT_CAP, options.outputCap ?? DEFAULT_OUTPUT_CAP);
  const listeners = new Set<() => void>();
  let state = initialUiState(options.view ?? 'workflow', options.project ?? '', timers.now());
  let anchor: ScrollPosition | null = null;
  let snapshot = snap();
  let dirty = false;
  let pending: unknown = null;
  let lastFlushAt = Number.NEGATIVE_INFINITY;
  let flushes = 0;
  let disposed = false;

  function snap(): UiSnapshot {
    const lane = state.interaction.outputLane;
    const shown = lane === null ? buffer : (laneBuffers.get(lane) ?? new LineBuffer<OutputLine>(1));
    return {
      state,
      output: {
        buffer: shown,
        firstSeq: shown.firstSeq,
        lastSeq: shown.lastSeq,
        dropped: shown.dropped,
        anchor,
      },
    };
  }

  function keepLaneLine(line: OutputLine): void {
    if (!line.lane) return;
    let own = laneBuffers.get(line.lane);
    if (!own) {
      own = new LineBuffer<OutputLine>(laneCap);
      laneBuffers.set(line.lane, own);
      // The oldest lane's lines go first (a Map iterates in insertion order).
      const oldest = laneBuffers.keys().next().value;
      if (laneBuffers.size > KEPT_LANE_OUTPUTS && oldest !== undefined) laneBuffers.delete(oldest);
    }
    own.push(line);
  }

  function notify(): void {
    if (pending !== null) {
      timers.clearTimeout(pending);
      pending = null;
    }
    if (!dirty || disposed) return;
    dirty = false;
    lastFlushAt = timers.now();
    state = { ...state, nowMs: lastFlushAt };
    snapshot = snap();
    flushes++;
    for (const listener of [...listeners]) listener();
  }

  function schedule(): void {
    dirty = true;
    if (pending !== null || disposed) return;
    const wait = Math.max(0, lastFlushAt + interval - timers.now());
    pending = timers.setTimeout(notify, wait);
  }

  function interact(change: (state: UiState) => UiState): void {
    state = change(state);
    dirty = true;
    notify();
  }

  return {
    dispatch(event) {
      state = reduceUi(state, event);
      for (const line of outputLinesOf(event)) {
        buffer.push(line);
        keepLaneLine(line);
      }
      schedule();
    },
    showOutput(lane) {
      anchor = null;
      interact((s) => ({ ...s, interaction: { ...s.interaction, outputLane: lane } }));
    },
    // Issue 16 item 10, issue 17: once the work is over, or while a gate waits with nothing at
    // work, nothing on screen keeps time, so the clock redraws nothing; otherwise one redraw a
    // second at most (the stopwatches), batched with any events of the same 100 ms.
    tick() {
      if (!clockStands(state)) schedule();
    },
    getSnapshot: () => snapshot,
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    interact,
    setInteraction(patch) {
      interact((s) => ({ ...s, interaction: { ...s.interaction, ...patch } }));
    },
    scroll(command, pageRows, rowsOf) {
      // What the Output panel shows now: every line, or one lane's (issue 19).
      const shown = snap().output;
      anchor = scrollAnchor(anchor, command, shown.firstSeq, shown.lastSeq, pageRows, rowsOf);
      dirty = true;
      notify();
    },
    flush: notify,
    get flushes() {
      return flushes;
    },
    dispose() {
      if (pending !== null) timers.clearTimeout(pending);
      pending = null;
      disposed = true;
      listeners.clear();
    },
  };
}
