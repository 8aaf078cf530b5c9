import type { EventType, StampedEventOf } from '../../engine/events.js';
import { sandboxOf } from '../format/sandbox.js';
import { flatten, flattenOrNull } from '../format/text.js';
import { KEPT_PATHS, KEPT_VERIFICATIONS, type UiState, type VerifyRow } from './ui-state.js';

/** The running agent, its liveness, the circuit breaker, the judge's blast radius, verifications. */

type Of<K extends EventType> = StampedEventOf<K>;

export function agentStarted(state: UiState, e: Of<'agent.started'>, atMs: number): UiState {
  return {
    ...state,
    agent: {
      role: e.role,
      attempt: e.attempt,
      model: flatten(e.model, 100),
      startedAtMs: atMs,
      finished: null,
    },
    // Silence is measured from the start of this agent, not from the previous one's last line.
    activity: { lastOutputAtMs: atMs, lastActivityAtMs: atMs },
    retry: null,
    wait: null,
  };
}

// Output comes in bursts of lines stamped the same millisecond: nothing changes, no new state
// (the state is ~30 fields; copying it per line was the reducer's main cost at 100k lines/s).
export function agentOutput(state: UiState, atMs: number): UiState {
  const { activity } = state;
  if (activity.lastOutputAtMs === atMs && activity.lastActivityAtMs === atMs && state.retry === null)
    return state;
  return { ...state, activity: { lastOutputAtMs: atMs, lastActivityAtMs: atMs }, retry: null };
}

export function agentActivity(state: UiState, atMs: number): UiState {
  if (state.activity.lastActivityAtMs === atMs) return state;
  return { ...state, activity: { ...state.activity, lastActivityAtMs: atMs } };
}

export function agentRetry(state: UiState, e: Of<'agent.retry'>, atMs: number): UiState {
  return {
    ...agentActivity(state, atMs),
    retry: { attempt: e.attempt, max: e.max_retries, error: flatten(e.error, 200) },
  };
}

export function agentFinished(state: UiState, e: Of<'agent.finished'>, atMs: number): UiState {
  const cost = Number.isFinite(e.cost_usd) && e.cost_usd > 0 ? e.cost_usd : 0;
  return {
    ...state,
    agent: state.agent ? { ...state.agent, finished: { ok: e.ok, atMs } } : null,
    retry: null,
    // Issue 16 item 7: a workflow's spend is what the runner recorded in WORKFLOW.json (its
    // `workflow.started` and `workflow.spend` events), the number `ralphy status` reads; adding
    // each agent's own report here as well made a second total. A loop has no such record.
    header:
      state.view === 'workflow' ? state.header : { ...state.header, costUsd: state.header.costUsd + cost },
  };
}

export function breakerChanged(state: UiState, e: Of<'breaker.changed'>, atMs: number): UiState {
  return {
    ...state,
    breaker: {
      snapshot: e.breaker,
      // A reset or a pause keeps the last trigger on screen: it is what the human wants to know.
      trigger: e.trigger ?? state.breaker?.trigger ?? null,
      detail: flattenOrNull(e.detail) ?? state.breaker?.detail ?? null,
      changedAtMs: atMs,
    },
  };
}

export function judgeFinished(state: UiState, e: Of<'judge.finished'>): UiState {
  return {
    ...state,
    blast: {
      scope: e.scope === 'branch' ? 'branch' : 'step',
      filesTouched: e.blast_radius.files_touched,
      linesAdded: e.blast_radius.lines_added,
      linesDeleted: e.blast_radius.lines_deleted,
      newFiles: e.blast_radius.new_files,
      code: e.code,
      violations: e.violations.slice(0, KEPT_PATHS).map((v) => flatten(v, 300)),
      touchedPaths: e.touched_paths.slice(0, KEPT_PATHS).map((p) => flatten(p, 300)),
      touchedTotal: e.touched_paths.length,
      // The branch's measure is not a run: no sandbox to name.
      sandbox: e.scope === 'branch' ? null : sandboxOf(e),
      refusedWrites: e.refused_writes ?? 0,
    },
  };
}

export function verifyStarted(state: UiState, e: Of<'verify.started'>, atMs: number): UiState {
  const row: VerifyRow = {
    templateId: flatten(e.template_id, 64),
    phase: e.phase,
    command: flatten([e.cmd, ...e.args].join(' '), 300),
    status: 'running',
    exitCode: null,
    startedAtMs: atMs,
    durationMs: null,
  };
  return { ...state, verifications: [...state.verifications, row].slice(-KEPT_VERIFICATIONS) };
}

export function verifyFinished(state: UiState, e: Of<'verify.finished'>, atMs: number): UiState {
  const status = e.timed_out ? 'timed_out' : e.exit_code === 0 ? 'passed' : 'failed';
  const templateId = flatten(e.template_id, 64);
  const index = state.verifications.findLastIndex(
    (row) => row.status === 'running' && row.templateId === templateId && row.phase === e.phase,
  );
  const finished: VerifyRow = {
    templateId,
    phase: e.phase,
    command:
      index >= 0 ? (state.verifications[index]?.command ?? '') : flatten([e.cmd, ...e.args].join(' '), 300),
    status,
    exitCode: e.exit_code,
    startedAtMs: index >= 0 ? (state.verifications[index]?.startedAtMs ?? atMs) : atMs - e.duration_ms,
    durationMs: e.duration_ms,
  };
  const verifications =
    index >= 0
      ? state.verifications.map((row, i) => (i === index ? finished : row))
      : [...state.verifications, finished].slice(-KEPT_VERIFICATIONS);
  return { ...state, verifications };
}
