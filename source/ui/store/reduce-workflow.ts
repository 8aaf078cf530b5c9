import type { EventType, GateKind, StampedEvent, StampedEventOf } from '../../engine/events.js';
import type { WorkflowStateName } from '../../engine/protocol/workflow.js';
import { flatten, flattenOrNull } from '../format/text.js';
import { gateOrigin } from './reduce-lanes.js';
import {
  type EndState,
  type GateNote,
  initialPhaseRows,
  type PhaseRow,
  type PhaseSpendModel,
  type PhaseStatus,
  type TaskRow,
  TIMELINE_STATES,
  type TimelineState,
  type UiState,
} from './ui-state.js';

/**
 * The workflow timeline (seed 002 §8 states), tasks and gates, from workflow events. Their text
 * comes from models (TASKS.md titles, what an agent claimed), the PRD and git: it is made safe
 * for the terminal here, where it enters the state (see `flatten`).
 */

type Of<K extends EventType> = StampedEventOf<K>;

const END_STATES: readonly WorkflowStateName[] = ['COMPLETED', 'FAILED', 'REJECTED'];

function isTimelineState(state: WorkflowStateName): state is TimelineState {
  return (TIMELINE_STATES as readonly string[]).includes(state);
}

const isCurrent = (row: PhaseRow) => row.status === 'running' || row.status === 'waiting';

/** Where a phase stands in the seed order (the rows may not hold every phase: PLANNING is optional). */
const orderOf = (state: TimelineState) => TIMELINE_STATES.indexOf(state);

/** The timeline with a row for `state`, in seed order (PLANNING is added when it is entered). */
function withRow(phases: readonly PhaseRow[], state: TimelineState): readonly PhaseRow[] {
  if (phases.some((row) => row.state === state)) return phases;
  const row: PhaseRow = { state, status: 'pending', startedAtMs: null, endedAtMs: null, gates: [] };
  return [...phases, row].sort((a, b) => orderOf(a.state) - orderOf(b.state));
}

/** The phase's spend in its row (a row is added for it if the phase has none yet). */
export function workflowSpend(state: UiState, e: Of<'workflow.spend'>): UiState {
  const spend: PhaseSpendModel = {
    costUsd: e.cost_usd,
    held: { usd: e.unreported_usd ?? 0, calls: e.unreported_calls ?? 0 },
    calls: e.calls,
    maxCostUsd: e.max_cost_usd,
    maxCalls: e.max_calls,
  };
  return {
    ...state,
    // The workflow's recorded total (WORKFLOW.json cost_usd), as is: the one source of its spend.
    header: {
      ...state.header,
      costUsd: e.total_cost_usd,
      held: { usd: e.total_unreported_usd ?? 0, calls: e.total_unreported_calls ?? 0 },
    },
    phases: withRow(state.phases, e.phase).map((row) => (row.state === e.phase ? { ...row, spend } : row)),
  };
}

/** Spend recorded by an earlier run (a resume), on the rows that exist. */
function withSpendOf(phases: readonly PhaseRow[], recorded: Of<'workflow.started'>['phases']): PhaseRow[] {
  return phases.map((row) => {
    const s = recorded?.[row.state as keyof NonNullable<typeof recorded>];
    if (!s) return row;
    return {
      ...row,
      spend: {
        costUsd: s.cost_usd,
        held: { usd: s.unreported_usd ?? 0, calls: s.unreported_calls ?? 0 },
        calls: s.calls,
        maxCostUsd: s.max_cost_usd,
        maxCalls: s.max_calls,
      },
    };
  });
}

/** Phases an earlier run finished (and pending ones before `before`) are done, with no times. */
function withDone(
  phases: readonly PhaseRow[],
  completed: readonly WorkflowStateName[],
  before: number,
): PhaseRow[] {
  const finished = completed.filter(isTimelineState);
  return finished
    .reduce(withRow, phases)
    .map((row) =>
      row.status === 'pending' && (finished.includes(row.state) || orderOf(row.state) < before)
        ? { ...row, status: 'done' }
        : row,
    );
}

/** The resume question's picture: what the stopped workflow finished shows done (defect 12). */
export function workflowResumable(state: UiState, e: Of<'workflow.resumable'>): UiState {
  return { ...state, phases: withDone(state.phases, e.completed_phases, -1) };
}

export function workflowStarted(state: UiState, e: Of<'workflow.started'>, atMs: number): UiState {
  const resumedAt =
    e.resumed_from && isTimelineState(e.resumed_from) ? TIMELINE_STATES.indexOf(e.resumed_from) : -1;
  return {
    ...state,
    header: {
      ...state.header,
      project: state.header.project || flatten(e.project, 200),
      title: flatten(e.prd_title, 300),
      branch: flattenOrNull(e.feature_branch ?? e.base_branch, 200),
      startedAtMs: state.header.startedAtMs ?? atMs,
      // Issue 16 item 7: the workflow's cap (workflow.max_cost_usd), as `ralphy status` shows it;
      // none when it has none (a milestone's ledger cap is not the workflow's).
      budgetUsd: e.max_cost_usd ?? null,
      // A resume goes on from what the workflow already spent (WORKFLOW.json), never from $0.
      costUsd: e.cost_usd ?? state.header.costUsd,
      held:
        e.cost_usd === undefined
          ? state.header.held
          : { usd: e.unreported_usd ?? 0, calls: e.unreported_calls ?? 0 },
    },
    // A resume starts after phases finished by an earlier run: they are done, with no times. An
    // optional phase the earlier run went through (PLANNING) keeps its row. A fresh start (after
    // `n` at the resume question, which showed the old workflow's phases) starts from none.
    phases: withSpendOf(
      withDone(e.resumed_from ? state.phases : initialPhaseRows(), e.completed_phases ?? [], resumedAt),
      e.phases,
    ),
    tasks: e.tasks.map((t) => ({
      number: t.number,
      title: flatten(t.title, 300),
      status: t.status,
      claimed: flattenOrNull(t.claimed ?? null, 300),
      verified: flattenOrNull(t.verified ?? null, 300),
      verdict: verdictOf(t.verdict),
    })),
  };
}

export function workflowChanged(state: UiState, e: Of<'workflow.changed'>, atMs: number): UiState {
  const target = e.state;
  const targetIndex = isTimelineState(target) ? TIMELINE_STATES.indexOf(target) : -1;
  const closing: PhaseStatus = target === 'FAILED' ? 'failed' : target === 'REJECTED' ? 'rejected' : 'done';
  const entered: PhaseStatus =
    e.status === 'waiting' ? 'waiting' : e.status === 'interrupted' ? 'interrupted' : 'running';
  const rows = isTimelineState(target) ? withRow(state.phases, target) : state.phases;
  const phases = rows.map((row): PhaseRow => {
    if (row.state === target) {
      // Same phase again (running <-> waiting for a human): keep its start.
      const gates = state.earlyGates.length > 0 ? [...state.earlyGates, ...row.gates] : row.gates;
      // Interrupted: the phase stops here (its time too) until `ralphy start` resumes it.
      if (entered === 'interrupted') return { ...row, status: entered, endedAtMs: atMs, gates };
      return isCurrent(row)
        ? { ...row, status: entered, gates }
        : { ...row, status: entered, startedAtMs: atMs, endedAtMs: null, gates };
    }
    if (isCurrent(row)) return { ...row, status: closing, endedAtMs: atMs };
    // Entering a later phase means the earlier ones are behind us (a resume skips them).
    if (row.status === 'pending' && orderOf(row.state) < targetIndex) return { ...row, status: 'done' };
    return row;
  });
  const ended = END_STATES.includes(target);
  return {
    ...state,
    workflowState: target,
    phases,
    earlyGates: isTimelineState(target) ? [] : state.earlyGates,
    end: ended
      ? { state: target as EndState, reason: e.reason, detail: flattenOrNull(e.detail), atMs }
      : state.end,
    wait: state.workflowState === target ? state.wait : null,
  };
}

export function gateRequested(state: UiState, e: Of<'gate.requested'>): UiState {
  const lane = (e as StampedEvent).lane ?? null;
  // Lanes may ask at once (issue 19): the gate on screen stays until it is answered; the port
  // shows the next one then. Two questions never share the panel, and a key answers what it shows.
  if (state.gate && !sameGate(state.gate, e.gate, lane)) return state;
  const lines = e.lines.map((line) => flatten(line));
  // The documents come with the port's request (not the event): a late event keeps them.
  const documents = state.gate?.gate === e.gate ? state.gate.documents : undefined;
  return {
    ...state,
    // A new question starts at its first row.
    interaction: state.gate ? state.interaction : { ...state.interaction, gateTop: 0 },
    gate: {
      gate: e.gate,
      title: flatten(e.title, 300),
      lines,
      answer: e.answer,
      documents,
      lane,
      origin: gateOrigin(state, lane),
    },
  };
}

/** The gate on screen is this kind of gate, asked by this lane (or by the workflow). */
function sameGate(shown: NonNullable<UiState['gate']>, gate: GateKind, lane: string | null): boolean {
  return shown.gate === gate && (shown.lane ?? null) === lane;
}

export function gateResolved(state: UiState, e: Of<'gate.resolved'>): UiState {
  const note: GateNote = { gate: e.gate, decision: e.decision, by: e.by, answer: flattenOrNull(e.answer) };
  // The resume question is about the stopped workflow, not one of its phases (it shows them done,
  // workflow.resumable): its note waits for the first phase entered. Its `n` starts a new
  // workflow, whose timeline starts from none even if that start is refused.
  if (e.gate === 'resume') {
    const phases = e.decision === 'reject' ? initialPhaseRows() : state.phases;
    return gateClosed({ ...state, phases, earlyGates: [...state.earlyGates, note] }, e);
  }
  let index = state.phases.findIndex(isCurrent);
  if (index < 0) index = state.phases.findLastIndex((row) => row.status !== 'pending');
  // No phase began yet (the resume question): the note waits for the first phase entered.
  if (index < 0) return gateClosed({ ...state, earlyGates: [...state.earlyGates, note] }, e);
  const phases = state.phases.map((row, i) => (i === index ? { ...row, gates: [...row.gates, note] } : row));
  return gateClosed({ ...state, phases }, e);
}

/** The gate panel closes and the typed draft goes once its gate is answered (not another lane's). */
function gateClosed(state: UiState, e: Of<'gate.resolved'>): UiState {
  if (state.gate && !sameGate(state.gate, e.gate, (e as StampedEvent).lane ?? null)) return state;
  return {
    ...state,
    gate: null,
    interaction: {
      ...state.interaction,
      draft: '',
      rejecting: false,
      gateTop: 0,
      overlay: state.interaction.overlay?.kind === 'document' ? null : state.interaction.overlay,
    },
  };
}

/** Only the runner's two verdicts pass; anything else (absent, unknown) is no verdict. */
function verdictOf(value: unknown): TaskRow['verdict'] {
  return value === 'verified' || value === 'rejected' ? value : null;
}

export function taskUpdated(state: UiState, e: Of<'task.updated'>): UiState {
  const row: TaskRow = {
    number: e.number,
    title: flatten(e.title, 300),
    status: e.status,
    claimed: flattenOrNull(e.claimed, 300),
    verified: flattenOrNull(e.verified, 300),
    verdict: verdictOf(e.verdict),
  };
  const others = state.tasks.filter((t) => t.number !== e.number);
  return { ...state, tasks: [...others, row].sort((a, b) => a.number - b.number) };
}

export function runFinished(state: UiState, e: Of<'run.finished'>, atMs: number): UiState {
  const ok = e.state === 'COMPLETED';
  // Defect 5: "✓ PR" only for a push that happened. Unpushed, the PR phase and the end say so.
  const pr = ok ? (e.pr_outcome ?? null) : null;
  const unpushed = pr?.kind === 'not_pushed';
  const prWords = pr && pr.kind !== 'opened' ? prWordsOf(pr.kind) : null;
  const lines = [
    ...(e.detail ? [e.detail] : []),
    ...(e.pr_url ? [`Pull request: ${e.pr_url}`] : []),
    ...e.next_steps.map((s) => `Next: ${s}`),
  ].map((line) => flatten(line));
  const ended =
    state.end ??
    (END_STATES.includes(e.state)
      ? { state: e.state as EndState, reason: e.reason, detail: flattenOrNull(e.detail), atMs }
      : null);
  const end = ended && prWords ? { ...ended, reason: prWords, partial: unpushed } : ended;
  const phases = unpushed
    ? state.phases.map((row): PhaseRow => (row.state === 'PR' ? { ...row, status: 'partial' } : row))
    : state.phases;
  const headline = `Workflow ${e.state}${e.reason ? ` (${e.reason})` : ''}${prWords ? ` · ${prWords}` : ''}`;
  return {
    ...state,
    end,
    phases,
    wait: null,
    header: { ...state.header, endedAtMs: atMs },
    result: {
      ok: ok && !unpushed,
      partial: unpushed,
      ...(e.status === 'interrupted' ? { interrupted: true } : {}),
      headline: e.status === 'interrupted' ? stoppedHeadline(state, e) : headline,
      lines,
    },
  };
}

function prWordsOf(kind: 'pushed' | 'not_pushed'): string {
  return kind === 'pushed' ? 'branch pushed, no pull request' : 'branch ready, not pushed';
}

/** A pause or a stop says so, and that it resumes: never "failed" (the newcomer's pass, defect 16). */
function stoppedHeadline(state: UiState, e: Of<'run.finished'>): string {
  return `${state.interaction.pausing ? 'Paused' : 'Stopped'} at ${e.state} (resumable)`;
}
