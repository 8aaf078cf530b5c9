import type { EventType, StampedEventOf } from '../../engine/events.js';
import { sandboxOf } from '../format/sandbox.js';
import { flatten, flattenOrNull } from '../format/text.js';
import { KEPT_TICKS, type UiState } from './ui-state.js';

/**
 * Ticks of `relais run` / `relais loop`: the running tick, its task, verdicts, the ledger. Text
 * from the orchestrator's task and the runner's report is made safe for the terminal here.
 */

type Of<K extends EventType> = StampedEventOf<K>;

export function runStarted(state: UiState, e: Of<'run.started'>, atMs: number): UiState {
  // A loop ends each tick with loop.tick (its row in `ticks`); a workflow's ticks have no such
  // event, so the running one is the last one: counted from it, or every tick was "tick 1".
  const lastTick = Math.max(state.ticks.at(-1)?.tick ?? 0, state.runningTick?.tick ?? 0);
  return {
    ...state,
    header: {
      ...state.header,
      project: state.header.project || flatten(e.project, 200),
      command: state.header.command ?? e.command,
      startedAtMs: state.header.startedAtMs ?? atMs,
      endedAtMs: null,
    },
    // A new tick: what the previous one proposed, touched and verified is history now. In a
    // workflow the last tick's blast radius and verifications stay until the new tick's replace
    // them (issue 16 item 3: between ticks the panels read "nothing judged yet" all along).
    runningTick: { tick: lastTick + 1, phase: null, startedAtMs: atMs, verdict: null },
    proposed: null,
    ...(state.view === 'workflow' ? {} : { blast: null, verifications: [] }),
  };
}

export function phaseChanged(state: UiState, e: Of<'phase.changed'>, atMs: number): UiState {
  const running = state.runningTick ?? {
    tick: (state.ticks.at(-1)?.tick ?? 0) + 1,
    phase: null,
    startedAtMs: atMs,
    verdict: null,
  };
  return { ...state, tickPhase: e.phase, runningTick: { ...running, phase: e.phase } };
}

export function taskProposed(state: UiState, e: Of<'task.proposed'>): UiState {
  return {
    ...state,
    proposed: {
      taskId: flatten(e.task_id, 100),
      milestone: flatten(e.milestone_id, 100),
      kind: e.task_kind,
      intent: flatten(e.intent, 2000),
      mode: flatten(e.mode, 100),
    },
  };
}

/**
 * A tick's end ends the work only for a lone tick (`relais run`) in the loop view. A loop goes on
 * to its next tick (loop.finished ends it), and a workflow's implementation emits one per task
 * before QA and the PR (run.finished ends it): the header's elapsed time must keep running.
 */
function tickEndsWork(state: UiState): boolean {
  return state.view === 'loop' && state.header.command !== 'loop';
}

export function tickFinished(state: UiState, e: Of<'tick.finished'>, atMs: number): UiState {
  return {
    ...state,
    header: tickEndsWork(state) ? { ...state.header, endedAtMs: atMs } : state.header,
    lastTick: {
      verdict: e.verdict,
      code: e.code,
      remediation: flatten(e.remediation, 600),
      detail: flattenOrNull(e.detail, 600),
      blastLine: flatten(e.blast_radius_line, 200),
      commit: flattenOrNull(e.commit, 100),
      reportPath: flattenOrNull(e.report_path, 300),
      sandbox: sandboxOf(e),
    },
    runningTick: state.runningTick ? { ...state.runningTick, verdict: e.verdict } : null,
  };
}

export function loopTick(state: UiState, e: Of<'loop.tick'>, atMs: number): UiState {
  const running = state.runningTick;
  const row = {
    tick: e.tick,
    verdict: e.verdict,
    code: e.code,
    taskId: flattenOrNull(e.task_id, 100),
    milestone: flattenOrNull(e.milestone, 100),
    blastLine: flatten(e.blast_radius_line, 200),
    costUsd: e.cost_usd,
    commit: flattenOrNull(e.commit, 100),
    control: e.control,
    durationMs: running ? atMs - running.startedAtMs : null,
  };
  return { ...state, ticks: [...state.ticks, row].slice(-KEPT_TICKS), runningTick: null, tickPhase: null };
}

export function ledgerUpdated(state: UiState, e: Of<'ledger.updated'>): UiState {
  const cap = e.caps.cost_usd > 0 ? e.caps.cost_usd : null;
  return {
    ...state,
    ledger: { milestone: flattenOrNull(e.milestone, 100), used: e.used, caps: e.caps },
    header: {
      ...state.header,
      // The loop's spend cap is the ledger's. A workflow shows its own cap only (issue 16 item 7:
      // the milestone's showed as a second cap when the workflow had none).
      budgetUsd: state.view === 'loop' ? (cap ?? state.header.budgetUsd) : state.header.budgetUsd,
    },
  };
}

export function loopFinished(state: UiState, e: Of<'loop.finished'>, atMs: number): UiState {
  const counts =
    Object.entries(e.verdicts)
      .map(([code, n]) => `${n} ${code}`)
      .join(', ') || 'no ticks';
  return {
    ...state,
    runningTick: null,
    tickPhase: null,
    header: { ...state.header, endedAtMs: atMs },
    result: {
      ok: e.exit === 'success',
      headline: `Loop ${e.exit} (${e.mode}): ${e.ticks} tick(s), ${e.calls} agent call(s)`,
      lines: [`Stopped because ${e.reason}`, `Verdicts: ${counts}`].map((line) => flatten(line)),
    },
  };
}
