import { sandboxWords } from '../format/sandbox.js';
import { duration } from '../format/time.js';
import { tickHeadline, tickStepLabel } from '../format/wording.js';
import type { ResultModel, UiState } from './ui-state.js';

/** Values several panels derive from the state; pure. */

/**
 * What the header names as "where we are". A narrow header asks for a shorter form: `short` says
 * the tick's step in fewer words, `shortest` also names the phase by its short name (`spec gate`).
 */
export function phaseLabel(state: UiState, form: 'full' | 'short' | 'shortest' = 'full'): string {
  const step = (tick: number) =>
    form === 'full'
      ? tickStepLabel(tick, state.tickPhase)
      : `tick ${tick}${state.tickPhase ? ` ${state.tickPhase}` : ''}`;
  if (state.view === 'loop') {
    if (state.runningTick) return step(state.runningTick.tick);
    return state.result ? 'finished' : state.ticks.length > 0 ? 'between ticks' : 'starting';
  }
  const current = state.workflowState ?? 'starting';
  const name = form === 'shortest' ? (SHORT_PHASE_NAMES[current] ?? current) : current;
  // The workflow's phase, then the tick's step in words of its own (issue 16 item 8).
  return current === 'IMPLEMENTATION' && state.runningTick
    ? `${name} · ${step(state.runningTick.tick)}`
    : name;
}

/** The phases' short names (the compact phase line, a narrow header). */
export const SHORT_PHASE_NAMES: Readonly<Record<string, string>> = {
  PLANNING: 'plan',
  SPECIFICATION: 'spec',
  AWAITING_SPEC_VALIDATION: 'spec gate',
  IMPLEMENTATION: 'build',
  QA: 'QA',
  AWAITING_QA_VALIDATION: 'QA gate',
  PR: 'PR',
};

/**
 * The work is over (the workflow reached an end state, the engine announced its end, or the front
 * end's `finish` ran): nothing runs any more, so nothing may spin or say "aborting".
 */
export function workIsOver(state: UiState): boolean {
  return state.interaction.over || state.result !== null || state.end !== null;
}

/**
 * Nothing is at work: the work is over, or it waits for a human at a gate. Then nothing spins, so
 * an idle screen is not redrawn ten times a second for a spinner (issue 16 item 10).
 */
export function nothingRuns(state: UiState): boolean {
  return workIsOver(state) || state.gate !== null;
}

/**
 * Nothing on screen keeps time, so the clock redraws nothing (issue 17: idle writes nothing). The
 * work is over (every time is frozen), or a human gate waits and no parallel lane is still at
 * work: then no agent or command runs, and a stopwatch ticking there would redraw the terminal
 * every second to count the human's reading time. The times shown stay those of the last redraw
 * (the gate's opening) and move on at the next key or event.
 */
export function clockStands(state: UiState): boolean {
  return (
    workIsOver(state) || (state.gate !== null && state.lanes.rows.every((lane) => lane.endedAtMs !== null))
  );
}

/** Run time so far (frozen once the work ended). */
export function elapsedMs(state: UiState): number | null {
  const { startedAtMs, endedAtMs } = state.header;
  if (startedAtMs === null) return null;
  return Math.max(0, (endedAtMs ?? state.nowMs) - startedAtMs);
}

/** The engine's own announcement of the end, or the last tick's outcome once the work is over. */
export function finalResult(state: UiState): ResultModel | null {
  if (state.result) return state.result;
  const last = state.lastTick;
  if (!state.interaction.over || !last) return null;
  return {
    ok: last.verdict === 'success',
    headline: tickHeadline(last.verdict, last.code),
    // Why and what to do first: on a small screen the panel's last lines are the ones cut.
    lines: [
      ...(last.detail ? [last.detail] : []),
      ...(last.verdict === 'success' ? [] : [`Fix: ${last.remediation}`]),
      last.blastLine,
      ...(last.sandbox ? [sandboxWords(last.sandbox)] : []),
      ...(last.reportPath ? [`Report: ${last.reportPath}`] : []),
    ],
  };
}

export function agentLabel(state: UiState): string | null {
  const agent = state.agent;
  if (!agent) return null;
  const attempt = agent.attempt > 1 ? ` #${agent.attempt}` : '';
  if (agent.finished) return `${agent.role}${attempt} ${agent.finished.ok ? 'finished' : 'failed'}`;
  return `${agent.role}${attempt} · ${agent.model} · ${duration(state.nowMs - agent.startedAtMs)}`;
}

/**
 * What the Output panel's title says (issue 19): with parallel lanes, whose lines it shows (one
 * lane, or all of them, and the key that switches); otherwise the running agent.
 */
export function outputLabel(state: UiState): string | null {
  if (state.lanes.rows.length === 0) return agentLabel(state);
  const lane = state.interaction.outputLane;
  const row = lane === null ? null : state.lanes.rows.find((r) => r.lane === lane);
  if (lane === null) return 'all lanes (Tab: one lane)';
  return row ? `lane ${lane} · task ${row.task} ${row.title}` : `lane ${lane}`;
}
