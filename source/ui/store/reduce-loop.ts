import type { StampedEvent } from '../../engine/events.js';
import { KEPT_TICKS, type UiState } from './ui-state.js';

/** Ticks of `relais run` / `relais loop`: the running tick, its task, verdicts, the ledger. */

type Of<K extends StampedEvent['type']> = Extract<StampedEvent, { type: K }>;

export function runStarted(state: UiState, e: Of<'run.started'>, atMs: number): UiState {
  const lastTick = state.ticks.at(-1)?.tick ?? 0;
  return {
    ...state,
    header: {
      ...state.header,
      project: state.header.project || e.project,
      command: state.header.command ?? e.command,
      startedAtMs: state.header.startedAtMs ?? atMs,
      endedAtMs: null,
    },
    // A new tick: what the previous one proposed, touched and verified is history now.
    runningTick: { tick: lastTick + 1, phase: null, startedAtMs: atMs, verdict: null },
    proposed: null,
    blast: null,
    verifications: [],
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
      taskId: e.task_id,
      milestone: e.milestone_id,
      kind: e.task_kind,
      intent: e.intent,
      mode: e.mode,
    },
  };
}

export function tickFinished(state: UiState, e: Of<'tick.finished'>, atMs: number): UiState {
  return {
    ...state,
    header: { ...state.header, endedAtMs: atMs },
    lastTick: {
      verdict: e.verdict,
      code: e.code,
      remediation: e.remediation,
      detail: e.detail,
      blastLine: e.blast_radius_line,
      commit: e.commit,
      reportPath: e.report_path,
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
    taskId: e.task_id,
    milestone: e.milestone,
    blastLine: e.blast_radius_line,
    costUsd: e.cost_usd,
    commit: e.commit,
    control: e.control,
    durationMs: running ? atMs - running.startedAtMs : null,
  };
  return { ...state, ticks: [...state.ticks, row].slice(-KEPT_TICKS), runningTick: null, tickPhase: null };
}

export function ledgerUpdated(state: UiState, e: Of<'ledger.updated'>): UiState {
  const cap = e.caps.cost_usd > 0 ? e.caps.cost_usd : null;
  return {
    ...state,
    ledger: { milestone: e.milestone, used: e.used, caps: e.caps },
    header: {
      ...state.header,
      // The loop's spend cap is the ledger's; a workflow's own max_cost_usd wins over it.
      budgetUsd: state.view === 'loop' ? (cap ?? state.header.budgetUsd) : (state.header.budgetUsd ?? cap),
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
      lines: [`Stopped because ${e.reason}`, `Verdicts: ${counts}`],
    },
  };
}
