import type { AgentRole, GateKind, TickPhase } from '../../engine/events.js';
import type { GateDocument } from '../../engine/gates.js';
import type { Code, Verdict } from '../../engine/protocol/codes.js';
import type { FleetSnapshot } from '../../engine/protocol/fleet.js';
import { type BreakerSnapshot, PHASE_ORDER, type WorkflowStateName } from '../../engine/protocol/workflow.js';
import type { SandboxShown } from '../format/sandbox.js';
import { flatten } from '../format/text.js';
import type { AgentLogEntry } from '../logs/agent-logs.js';
import { type LanesModel, NO_LANES } from './reduce-lanes.js';

/**
 * Everything the panels show, derived from engine events only. Plain immutable data: the reducer
 * returns a new state per event; the (large) agent output lives apart in a capped line buffer.
 */

/** `fleet`: the fleet view (`relais fleet status` on a terminal, issue 20). */
export type UiView = 'workflow' | 'loop' | 'fleet';

/** The timeline's rows: the workflow's running phases, in their order. */
export const TIMELINE_STATES = PHASE_ORDER;

export type TimelineState = (typeof TIMELINE_STATES)[number];
export type EndState = 'COMPLETED' | 'FAILED' | 'REJECTED';

/**
 * `interrupted`: Ctrl-C stopped the phase; `ralphy start` resumes it (nothing turns any more).
 * `partial`: the phase ended without doing its part (the PR phase left the branch unpushed).
 */
export type PhaseStatus =
  | 'pending'
  | 'running'
  | 'waiting'
  | 'interrupted'
  | 'done'
  | 'partial'
  | 'failed'
  | 'rejected';

export interface GateNote {
  readonly gate: GateKind;
  /** `aborted`: an abort ended the wait; `answer` says by what. */
  readonly decision: 'approve' | 'reject' | 'answer' | 'aborted';
  readonly by: 'human' | 'auto' | 'nobody';
  readonly answer: string | null;
}

export interface PhaseRow {
  readonly state: TimelineState;
  readonly status: PhaseStatus;
  readonly startedAtMs: number | null;
  readonly endedAtMs: number | null;
  /** Gate decisions taken while this phase was current. */
  readonly gates: readonly GateNote[];
  /** The phase's agent spend and calls with its caps (config `workflow.phases`), once known. */
  readonly spend?: PhaseSpendModel;
}

/** Calls whose cost was never reported (killed, interrupted): their maximum, held against the caps. */
export interface HeldSpend {
  readonly usd: number;
  readonly calls: number;
}

export const NOTHING_HELD: HeldSpend = { usd: 0, calls: 0 };

export interface PhaseSpendModel {
  /** Cap-guarding: reported costs plus `held.usd`. */
  readonly costUsd: number;
  readonly held: HeldSpend;
  readonly calls: number;
  readonly maxCostUsd: number | null;
  readonly maxCalls: number | null;
}

export interface WorkflowEnd {
  readonly state: EndState;
  readonly reason: string | null;
  readonly detail: string | null;
  readonly atMs: number;
  /** COMPLETED without its last step (the branch was not pushed): never shown as a plain ✓. */
  readonly partial?: boolean;
}

export interface HeaderModel {
  readonly project: string;
  readonly title: string | null;
  readonly branch: string | null;
  readonly command: string | null;
  readonly startedAtMs: number | null;
  /** When the work ended (the elapsed time stops there). */
  readonly endedAtMs: number | null;
  /** Cap-guarding total: reported costs plus `held.usd`. */
  readonly costUsd: number;
  /** The part of costUsd held for agent calls that never reported a cost (not spend). */
  readonly held: HeldSpend;
  readonly budgetUsd: number | null;
  readonly budgetWarnings: readonly string[];
}

export interface BreakerModel {
  readonly snapshot: BreakerSnapshot;
  readonly trigger: string | null;
  readonly detail: string | null;
  readonly changedAtMs: number;
}

export interface AgentModel {
  readonly role: AgentRole;
  readonly attempt: number;
  readonly model: string;
  readonly startedAtMs: number;
  /** null while running. */
  readonly finished: { readonly ok: boolean; readonly atMs: number } | null;
}

export interface ActivityModel {
  /** Last readable line the agent printed (agent.output). */
  readonly lastOutputAtMs: number | null;
  /** Last sign of life of any kind (output, tool call, API retry). */
  readonly lastActivityAtMs: number | null;
}

export interface BlastModel {
  /** `branch`: the whole feature branch (what the PR holds); `step`: the last judged step. */
  readonly scope: 'step' | 'branch';
  readonly filesTouched: number;
  readonly linesAdded: number;
  readonly linesDeleted: number;
  readonly newFiles: number;
  readonly code: Code | null;
  readonly violations: readonly string[];
  readonly touchedPaths: readonly string[];
  readonly touchedTotal: number;
  /** The sandbox the judged agent ran in; null when the engine did not say. */
  readonly sandbox?: SandboxShown | null;
  /** Writes refused before they happened (the scope hook): none reached the diff. */
  readonly refusedWrites?: number;
}

export type VerifyStatus = 'running' | 'passed' | 'failed' | 'timed_out';

export interface VerifyRow {
  readonly templateId: string;
  readonly phase: 'fast' | 'slow';
  readonly command: string;
  readonly status: VerifyStatus;
  readonly exitCode: number | null;
  readonly startedAtMs: number;
  readonly durationMs: number | null;
}

export interface TaskRow {
  readonly number: number;
  readonly title: string;
  readonly status: 'pending' | 'in_progress' | 'completed';
  /** What the agent said about it: never proof of anything. */
  readonly claimed: string | null;
  /** What the runner checked, or why it did not accept the task: words, never a verdict. */
  readonly verified: string | null;
  /** The runner's verdict: the only "done" that counts (no verdict is never shown as done). */
  readonly verdict: 'verified' | 'rejected' | null;
}

export interface GateModel {
  readonly gate: GateKind;
  readonly title: string;
  readonly lines: readonly string[];
  readonly answer: 'yes_no' | 'text';
  /** What is being approved, in full (SPEC.md, TASKS.md, QA_REPORT.md, the diff): `v` opens them. */
  readonly documents?: readonly GateDocument[];
  /** Issue 19: the parallel lane that asks, or null for the workflow itself. */
  readonly lane?: string | null;
  /** Whose question it is in words (`lane task-2-1 · task 2 "Billing"`), when a lane asks. */
  readonly origin?: string | null;
}

export interface WaitModel {
  readonly untilMs: number;
  readonly reason: string;
}

export interface ProposedTask {
  readonly taskId: string;
  readonly milestone: string;
  readonly kind: 'execute' | 'verify_only' | 'question';
  readonly intent: string;
  readonly mode: string;
}

export interface TickRow {
  readonly tick: number;
  readonly verdict: Verdict;
  readonly code: Code;
  readonly taskId: string | null;
  readonly milestone: string | null;
  readonly blastLine: string;
  readonly costUsd: number;
  readonly commit: string | null;
  readonly control: 'continue' | 'stop' | null;
  readonly durationMs: number | null;
}

export interface RunningTick {
  readonly tick: number;
  readonly phase: TickPhase | null;
  readonly startedAtMs: number;
  /** Set by tick.finished; the row moves to `ticks` at loop.tick. */
  readonly verdict: Verdict | null;
}

export interface LedgerCounters {
  readonly ticks: number;
  readonly orchestrator_calls: number;
  readonly builder_calls: number;
  readonly verify_runs: number;
  readonly cost_usd: number;
}

export interface LedgerModel {
  readonly milestone: string | null;
  readonly used: LedgerCounters;
  readonly caps: LedgerCounters;
}

export interface TickOutcome {
  readonly verdict: Verdict;
  readonly code: Code;
  readonly remediation: string;
  readonly detail: string | null;
  readonly blastLine: string;
  readonly commit: string | null;
  readonly reportPath: string | null;
  /** The sandbox the tick ran in; null when the engine did not say. */
  readonly sandbox?: SandboxShown | null;
}

/** The end of the work as the engine announced it (run.finished, loop.finished, tick.finished). */
export interface ResultModel {
  readonly ok: boolean;
  /** Ended, but not all done (the branch not pushed): ◐, not ✓ and not ✗. */
  readonly partial?: boolean;
  /**
   * Stopped on request (pause, Ctrl-C) and resumable: neither done nor failed, so it shows with
   * its own glyph (the newcomer's pass, defect 16: a pause ended on ✗).
   */
  readonly interrupted?: boolean;
  readonly headline: string;
  readonly lines: readonly string[];
}

/**
 * What covers the panels for a while: the `?` list of keys, a gate's document in the viewer
 * (`top`: the first wrapped row shown), all the output (`o`), the list of agent runs (`l`) and
 * one run's transcript in the viewer (issue 16 item 11).
 */
export type Overlay =
  | { readonly kind: 'help' }
  | { readonly kind: 'document'; readonly index: number; readonly top: number }
  | { readonly kind: 'output' }
  | LogListOverlay
  | {
      readonly kind: 'log';
      readonly entry: AgentLogEntry;
      /** The transcript as read (`r` reads it again). */
      readonly document: GateDocument;
      readonly top: number;
      /** The list it was opened from: Esc goes back to it. */
      readonly list: LogListOverlay;
    };

export interface LogListOverlay {
  readonly kind: 'logs';
  /** null while the list is being read. */
  readonly entries: readonly AgentLogEntry[] | null;
  readonly selected: number;
  /** Why the list or a transcript could not be read. */
  readonly error: string | null;
}

/** Key-driven state: what the footer offers and what a key means right now. */
export interface InteractionModel {
  /** `a` was pressed once: the next `y` or `a` aborts, `n` or Esc cancels. */
  readonly confirmingAbort: boolean;
  /** Abort was requested (by `a` + confirm or the first Ctrl-C). */
  readonly aborting: boolean;
  /**
   * The stop came from Ctrl-C (or a signal): a resumable interrupt, not an abort. The header and
   * footer say so, instead of "aborting".
   */
  readonly interrupting: boolean;
  /**
   * `p` was pressed (a workflow): the running agent finishes, then the run stops before the next
   * one, resumable (issue 16 item 11). The header says so until the work is over.
   */
  readonly pausing: boolean;
  /** The engine's work is over (the front end's `finish` was called): `q` leaves. */
  readonly over: boolean;
  /** What the human typed so far at a text gate. */
  readonly draft: string;
  /** A one-line hint after a key that does nothing now ("q works once the run is over"). */
  readonly hint: string | null;
  readonly overlay: Overlay | null;
  /**
   * `n` was pressed at a yes/no gate: the human types an optional reason (in `draft`); Enter
   * rejects, Esc goes back to the question (issue 16 item 5).
   */
  readonly rejecting: boolean;
  /**
   * The first row of the gate's question on screen, when a small terminal cannot show it whole:
   * the scroll keys move it inside the gate (the newcomer's pass, defect 9). 0 for a new gate.
   */
  readonly gateTop: number;
  /**
   * Issue 19: the lane whose output the Output panel shows (Tab cycles through the lanes and back
   * to all of them), or null for every line of the run.
   */
  readonly outputLane: string | null;
}

export interface UiState {
  readonly view: UiView;
  readonly nowMs: number;
  readonly header: HeaderModel;
  readonly workflowState: WorkflowStateName | null;
  readonly phases: readonly PhaseRow[];
  /**
   * Gate decisions taken before any phase began (the resume question, asked before the workflow
   * starts): they join the first phase entered.
   */
  readonly earlyGates: readonly GateNote[];
  readonly end: WorkflowEnd | null;
  readonly tickPhase: TickPhase | null;
  readonly breaker: BreakerModel | null;
  readonly agent: AgentModel | null;
  readonly activity: ActivityModel;
  readonly retry: { readonly attempt: number; readonly max: number; readonly error: string } | null;
  readonly blast: BlastModel | null;
  readonly verifications: readonly VerifyRow[];
  readonly tasks: readonly TaskRow[];
  readonly gate: GateModel | null;
  readonly wait: WaitModel | null;
  readonly proposed: ProposedTask | null;
  readonly ticks: readonly TickRow[];
  readonly runningTick: RunningTick | null;
  readonly ledger: LedgerModel | null;
  readonly lastTick: TickOutcome | null;
  readonly result: ResultModel | null;
  readonly interaction: InteractionModel;
  /** Parallel lanes and the merge queue (issue 19); empty with one lane. */
  readonly lanes: LanesModel;
  /**
   * Issue 20: the app follows a fleet run from the database (`relais attach`): the run is not
   * this process's, so leaving does not stop it, and its gates are answered from any machine.
   */
  readonly remote: { readonly runId: string; readonly repo: string } | null;
  /** Issue 20: the fleet view's latest reading of the fleet. */
  readonly fleet: FleetSnapshot | null;
}

/** How many finished ticks and verification rows are kept (the panels show the last few). */
export const KEPT_TICKS = 200;
export const KEPT_VERIFICATIONS = 40;
export const KEPT_PATHS = 50;

export function initialUiState(view: UiView, project: string, nowMs: number): UiState {
  return {
    view,
    nowMs,
    header: {
      // A directory name can hold any byte but `/`: escapes included. Made safe like all text.
      project: flatten(project, 200),
      title: null,
      branch: null,
      command: null,
      startedAtMs: null,
      endedAtMs: null,
      costUsd: 0,
      held: NOTHING_HELD,
      budgetUsd: null,
      budgetWarnings: [],
    },
    workflowState: null,
    phases: initialPhaseRows(),
    earlyGates: [],
    end: null,
    tickPhase: null,
    breaker: null,
    agent: null,
    activity: { lastOutputAtMs: null, lastActivityAtMs: null },
    retry: null,
    blast: null,
    verifications: [],
    tasks: [],
    gate: null,
    wait: null,
    proposed: null,
    ticks: [],
    runningTick: null,
    ledger: null,
    lastTick: null,
    result: null,
    interaction: {
      confirmingAbort: false,
      aborting: false,
      interrupting: false,
      pausing: false,
      over: false,
      draft: '',
      hint: null,
      overlay: null,
      rejecting: false,
      gateTop: 0,
      outputLane: null,
    },
    lanes: NO_LANES,
    remote: null,
    fleet: null,
  };
}

/** The timeline before anything ran. PLANNING joins it when the workflow enters it (it may be off). */
export function initialPhaseRows(): PhaseRow[] {
  return TIMELINE_STATES.filter((state) => state !== 'PLANNING').map((state) => ({
    state,
    status: 'pending',
    startedAtMs: null,
    endedAtMs: null,
    gates: [],
  }));
}
