import type { StampedEvent, StampedEventOf } from '../../engine/events.js';
import { flatten } from '../format/text.js';
import { epochOf } from '../format/time.js';
import {
  agentActivity,
  agentFinished,
  agentOutput,
  agentRetry,
  agentStarted,
  breakerChanged,
  judgeFinished,
  verifyFinished,
  verifyStarted,
} from './reduce-agent.js';
import { laneActivity, laneChanged, mergeChanged } from './reduce-lanes.js';
import {
  ledgerUpdated,
  loopFinished,
  loopTick,
  phaseChanged,
  runStarted,
  taskProposed,
  tickFinished,
} from './reduce-loop.js';
import {
  gateRequested,
  gateResolved,
  runFinished,
  taskUpdated,
  workflowChanged,
  workflowResumable,
  workflowSpend,
  workflowStarted,
} from './reduce-workflow.js';
import type { UiState } from './ui-state.js';

/**
 * The UI reducer: one engine event in, the next state out (pure; the agent output's lines are
 * kept apart, see `outputLinesOf`). An event the panels have no use for (a log line, the deadf
 * cycle's, one added to the union later) leaves the state as it is; it still shows in the output.
 */
export function reduceUi(state: UiState, event: StampedEvent): UiState {
  const reduce = REDUCERS[event.type] as
    | ((state: UiState, event: StampedEvent, atMs: number) => UiState)
    | undefined;
  const next = reduce ? reduce(state, event, stampOf(event.at, state.nowMs)) : state;
  // Issue 19: a parallel lane's own events also update its row in the Lanes panel.
  return event.lane ? laneActivity(next, event) : next;
}

// Bursts share their stamp: parse each distinct one once.
let lastStamp = '';
let lastStampMs = 0;
function stampOf(at: string, fallback: number): number {
  if (at !== lastStamp) {
    lastStamp = at;
    lastStampMs = epochOf(at, Number.NaN);
  }
  return Number.isNaN(lastStampMs) ? fallback : lastStampMs;
}

type Reducers = {
  [K in StampedEvent['type']]?: (state: UiState, event: StampedEventOf<K>, atMs: number) => UiState;
};

const REDUCERS: Reducers = {
  'run.started': runStarted,
  // Issue 20: the app follows a fleet run, or shows the fleet.
  'fleet.attached': (state, e) => ({
    ...state,
    remote: { runId: flatten(e.run_id, 200), repo: flatten(e.repo, 300) },
  }),
  'fleet.status': (state, e) => ({ ...state, fleet: e.snapshot }),
  'workflow.started': workflowStarted,
  'workflow.resumable': workflowResumable,
  'phase.changed': phaseChanged,
  'workflow.changed': workflowChanged,
  'workflow.spend': workflowSpend,
  // A lane's breaker is its own (issue 19): it shows in the lane's row, not in the Breaker panel.
  'breaker.changed': (state, e, atMs) => ((e as StampedEvent).lane ? state : breakerChanged(state, e, atMs)),
  'gate.requested': gateRequested,
  'gate.resolved': gateResolved,
  'workflow.waiting': (state, e, atMs) => ({
    ...state,
    wait: { untilMs: epochOf(e.until, atMs), reason: flatten(e.reason, 300) },
  }),
  'task.updated': taskUpdated,
  'agent.started': agentStarted,
  'agent.output': (state, _e, atMs) => agentOutput(state, atMs),
  'agent.tool': (state, _e, atMs) => agentActivity(state, atMs),
  'agent.retry': agentRetry,
  'agent.finished': agentFinished,
  'judge.finished': judgeFinished,
  'verify.started': verifyStarted,
  'verify.finished': verifyFinished,
  'budget.warning': (state, e) => ({
    ...state,
    header: { ...state.header, budgetWarnings: e.warnings.map((w) => flatten(w, 300)) },
  }),
  'task.proposed': taskProposed,
  'ledger.updated': ledgerUpdated,
  'loop.tick': loopTick,
  'loop.finished': loopFinished,
  'run.finished': runFinished,
  'tick.finished': tickFinished,
  'lane.changed': laneChanged,
  'merge.changed': mergeChanged,
};
