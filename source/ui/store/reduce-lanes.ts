import type { LanePhase, MergeChangedEvent, StampedEvent, StampedEventOf } from '../../engine/events.js';
import type { BreakerSnapshot } from '../../engine/protocol/workflow.js';
import { flatten } from '../format/text.js';
import type { UiState } from './ui-state.js';

/**
 * The Lanes panel's model (issue 19): one row per parallel lane, from `lane.changed` and from the
 * lane-tagged events of its tick (the agent running, its last line), and the merge queue's last
 * step. Pure; unused when the workflow runs one task at a time (no lane events).
 */

export interface LaneRow {
  readonly lane: string;
  readonly task: number;
  readonly title: string;
  readonly phase: LanePhase;
  readonly detail: string | null;
  readonly agent: string | null;
  readonly tickPhase: string | null;
  readonly lastLine: string | null;
  readonly startedAtMs: number;
  /** When the lane landed, was kept or failed (its elapsed time stops there). */
  readonly endedAtMs: number | null;
  readonly costUsd: number;
  /** The lane's own circuit breaker (seed 002 §6.1, one per lane), once it reported. */
  readonly breaker: BreakerSnapshot | null;
}

export interface LanesModel {
  readonly rows: readonly LaneRow[];
  readonly merge: {
    readonly lane: string;
    readonly step: MergeChangedEvent['step'];
    readonly detail: string | null;
    readonly waiting: readonly string[];
  } | null;
}

export const NO_LANES: LanesModel = { rows: [], merge: null };
/** Rows kept: the running lanes and the most recent ended ones. */
const KEPT_LANES = 32;
const ENDED: readonly LanePhase[] = ['landed', 'kept', 'failed', 'discarded', 'paused'];

export function laneChanged(state: UiState, e: StampedEventOf<'lane.changed'>, atMs: number): UiState {
  const before = state.lanes.rows.find((r) => r.lane === e.lane);
  const row: LaneRow = {
    lane: flatten(e.lane, 60),
    task: e.task,
    title: flatten(e.title, 200),
    phase: e.phase,
    detail: e.detail === null ? null : flatten(e.detail, 300),
    agent: before?.agent ?? null,
    tickPhase: before?.tickPhase ?? null,
    lastLine: before?.lastLine ?? null,
    startedAtMs: before?.startedAtMs ?? atMs,
    endedAtMs: ENDED.includes(e.phase) ? atMs : null,
    costUsd: e.cost_usd,
    breaker: before?.breaker ?? null,
  };
  const rows = before
    ? state.lanes.rows.map((r) => (r.lane === e.lane ? row : r))
    : [...state.lanes.rows, row].slice(-KEPT_LANES);
  return { ...state, lanes: { ...state.lanes, rows } };
}

export function mergeChanged(state: UiState, e: StampedEventOf<'merge.changed'>): UiState {
  return {
    ...state,
    lanes: {
      ...state.lanes,
      merge: {
        lane: flatten(e.lane, 60),
        step: e.step,
        detail: e.detail === null ? null : flatten(e.detail, 300),
        waiting: e.waiting.map((w) => flatten(w, 60)),
      },
    },
  };
}

/** What a lane's own events say about it: the agent running, the tick's phase, its last line, its breaker. */
export function laneActivity(state: UiState, e: StampedEvent): UiState {
  const lane = e.lane;
  if (!lane || !state.lanes.rows.some((r) => r.lane === lane)) return state;
  const patch: Partial<LaneRow> | null =
    e.type === 'agent.started'
      ? { agent: e.role }
      : e.type === 'agent.output'
        ? { lastLine: flatten(e.text, 200) }
        : e.type === 'phase.changed'
          ? { tickPhase: e.phase }
          : e.type === 'breaker.changed'
            ? { breaker: e.breaker }
            : null;
  if (!patch) return state;
  const rows = state.lanes.rows.map((r) => (r.lane === lane ? { ...r, ...patch } : r));
  return { ...state, lanes: { ...state.lanes, rows } };
}

/** Whose gate it is in words, when a lane asks (issue 19): `lane task-2-1 · task 2 "Billing"`. */
export function gateOrigin(state: UiState, lane: string | null | undefined): string | null {
  if (!lane) return null;
  const row = state.lanes.rows.find((r) => r.lane === lane);
  const name = flatten(lane, 60);
  return row ? `lane ${name} · task ${row.task} "${row.title}"` : `lane ${name}`;
}

/** Lanes still at work: not landed, kept, failed, discarded or paused. */
export function runningLanes(state: UiState): number {
  return state.lanes.rows.filter((r) => r.endedAtMs === null).length;
}

/** The lanes the Output panel can show, in the order Tab visits them (then back to all). */
export function outputLanes(state: UiState): string[] {
  return state.lanes.rows.map((r) => r.lane);
}
