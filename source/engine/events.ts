import type { Code, Verdict } from './protocol/codes.js';
import type { FleetSnapshot } from './protocol/fleet.js';
import type { BlastRadius, SandboxName, VerificationRun } from './protocol/report.js';
import type {
  AttemptRecord,
  BreakerSnapshot,
  BudgetPhase,
  FailureReason,
  PrOutcome,
  TaskVerdict,
  WorkflowFile,
  WorkflowStateName,
} from './protocol/workflow.js';

/** Event text is model and process output: front ends print it through these, never raw. */
export { oneLine, printable, stripControls } from './workspace/printable.js';

/**
 * The one typed event union of the engine (docs/ARCHITECTURE.md "Flow of a run"). Events are plain JSON, so
 * the NDJSON reporter prints them as they are; front ends only ever see the engine through them.
 */

export type TickPhase =
  | 'LOCK'
  | 'PREFLIGHT'
  | 'ORCHESTRATE'
  | 'BUILD'
  | 'JUDGE'
  | 'VERIFY'
  | 'REPORT'
  | 'END';
export type AgentRole = 'orchestrator' | 'builder' | 'spec' | 'dev' | 'qa' | 'planner' | 'mapper';

/** `plan`: the planner's questions (a text gate) and its proceed question (yes/no), seed 004. */
export type GateKind = 'spec' | 'qa' | 'input' | 'resume' | 'plan';

/** What an agent printed: its own words, or an error (a failed tool call, an API error). */
export type OutputKind = 'text' | 'error';

/** The milestone counters `ledger.updated` carries twice: what was used, and the caps. */
export interface LedgerCounts {
  ticks: number;
  orchestrator_calls: number;
  builder_calls: number;
  verify_runs: number;
  cost_usd: number;
}

export type EngineEvent =
  | { type: 'run.started'; run_id: string; command: string; project: string }
  /**
   * Issue 20: this front end follows a fleet run from the database (`relais attach`); the run
   * goes on in the fleet without it, and its gates are answered from here or from anywhere.
   */
  | { type: 'fleet.attached'; run_id: string; repo: string }
  /** Issue 20: the fleet as its database shows it (`relais fleet status` on a terminal). */
  | { type: 'fleet.status'; snapshot: FleetSnapshot }
  /** `ralphy start`: once, before the first phase (also on a resume, which names where it resumes). */
  | {
      type: 'workflow.started';
      project: string;
      prd_title: string;
      base_branch: string | null;
      feature_branch: string | null;
      engine: 'ticks' | 'single' | 'cycle';
      resumed_from: WorkflowStateName | null;
      /** Phases an earlier run finished for good (a resume shows them done, PLANNING included). */
      completed_phases?: WorkflowStateName[];
      max_cost_usd: number | null;
      /** What the workflow already spent (a resume goes on from there, not from $0). */
      cost_usd?: number;
      /** The part of cost_usd held for earlier calls of unknown cost, and how many. */
      unreported_usd?: number;
      unreported_calls?: number;
      /** Each agent phase's spend so far and caps (config `workflow.phases`). */
      phases?: WorkflowFile['phases'];
      tasks: Array<{
        number: number;
        title: string;
        status: 'pending' | 'in_progress' | 'completed';
        claimed?: string | null;
        verified?: string | null;
        /** The runner's verdict (see task.updated); absent means none yet. */
        verdict?: TaskVerdict | null;
      }>;
    }
  /**
   * `ralphy start` found a stopped workflow and asks whether to resume it: the phases it finished,
   * so the question is asked over the true picture, not a blank timeline (newcomer's defect 12).
   */
  | { type: 'workflow.resumable'; state: WorkflowStateName; completed_phases: WorkflowStateName[] }
  | { type: 'phase.changed'; phase: TickPhase }
  /** A Ralphy workflow state (seed 002 §8), persisted in WORKFLOW.json at the same moment. */
  | {
      type: 'workflow.changed';
      state: WorkflowStateName;
      status: WorkflowFile['status'];
      reason: FailureReason | null;
      detail: string | null;
    }
  | {
      type: 'breaker.changed';
      breaker: BreakerSnapshot;
      /** Which trigger fired, or null for a reset, a pause or a resume. */
      trigger: 'inactivity' | 'repeated_error' | 'stagnation' | 'output_size' | null;
      /** The trigger and its threshold in words ("inactivity detected (60s without output)"). */
      detail: string | null;
      log: string[];
    }
  /** A human decision is needed; `lines` say what is being approved (task titles, QA summary, a question). */
  | { type: 'gate.requested'; gate: GateKind; title: string; lines: string[]; answer: 'yes_no' | 'text' }
  | {
      type: 'gate.resolved';
      gate: GateKind;
      /** `aborted`: an abort ended the wait; `answer` then says by what ("the abort key (a) in the app"). */
      decision: 'approve' | 'reject' | 'answer' | 'aborted';
      by: 'human' | 'auto' | 'nobody';
      answer: string | null;
    }
  /**
   * An agent call of a workflow phase finished: that phase's spend and calls so far with its caps
   * (config `workflow.phases`), and the workflow's total. Persisted in WORKFLOW.json first.
   */
  | {
      type: 'workflow.spend';
      phase: BudgetPhase;
      cost_usd: number;
      calls: number;
      max_cost_usd: number | null;
      max_calls: number | null;
      /** The part of cost_usd held for calls of unknown cost (their maximum), and how many. */
      unreported_usd?: number;
      unreported_calls?: number;
      total_cost_usd: number;
      /** The part of total_cost_usd held for calls of unknown cost, and how many. */
      total_unreported_usd?: number;
      total_unreported_calls?: number;
    }
  /** A usage or rate limit: the run waits until `until`, then resumes the same step. */
  | { type: 'workflow.waiting'; until: string; reason: string }
  /** What the agent claimed and what the runner verified, kept apart (issue 5 shows both). */
  | {
      type: 'task.updated';
      number: number;
      title: string;
      status: 'pending' | 'in_progress' | 'completed';
      claimed: string | null;
      /** What the runner checked, or why it did not accept the task: words, never a verdict. */
      verified: string | null;
      /**
       * The runner's verdict, the only "done" a front end may show (issue 16 item 1): `verified`
       * after a judged and verified completion, `rejected` after a stopped or blocked attempt.
       * Absent or null: no verdict yet, which never shows as done.
       */
      verdict?: TaskVerdict | null;
    }
  | { type: 'agent.started'; role: AgentRole; attempt: number; command: string; model: string }
  | { type: 'agent.output'; role: AgentRole; text: string; kind: OutputKind }
  | { type: 'agent.tool'; role: AgentRole; tool: string; target: string }
  | {
      type: 'agent.retry';
      role: AgentRole;
      attempt: number;
      max_retries: number;
      error: string;
      retry_delay_ms: number;
    }
  | {
      type: 'agent.finished';
      role: AgentRole;
      ok: boolean;
      exit_code: number | null;
      cost_usd: number;
      duration_ms: number;
      summary: string;
    }
  | {
      type: 'judge.finished';
      /** `branch`: the whole feature branch measured for the PR (no verdict); absent: one step's judgement. */
      scope?: 'step' | 'branch';
      code: Code | null;
      blast_radius: BlastRadius;
      blast_radius_line: string;
      /** The sandbox the judged agent ran in (issue 14), for the Blast radius panel. */
      sandbox?: SandboxName | null;
      violations: string[];
      touched_paths: string[];
      /**
       * Writes the scope hook refused before they happened, in the judged run: the diff holds
       * none of them, yet the agent tried (the newcomer's pass, defect 27).
       */
      refused_writes?: number;
    }
  | { type: 'verify.started'; template_id: string; phase: 'fast' | 'slow'; cmd: string; args: string[] }
  | ({ type: 'verify.finished'; summary: string } & VerificationRun)
  | { type: 'budget.warning'; warnings: string[] }
  /** The orchestrator's task for this tick, once the runner accepted it. */
  | {
      type: 'task.proposed';
      task_id: string;
      milestone_id: string;
      task_kind: 'execute' | 'verify_only' | 'question';
      intent: string;
      mode: 'claude_code' | 'patch' | 'cursor' | 'control';
    }
  /** The milestone ledger after every write (STATE.json), against its caps. */
  | {
      type: 'ledger.updated';
      milestone: string | null;
      used: LedgerCounts;
      caps: LedgerCounts;
    }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; message: string }
  | {
      type: 'loop.tick';
      tick: number;
      run_id: string;
      verdict: Verdict;
      code: Code;
      task_id: string | null;
      milestone: string | null;
      blast_radius_line: string;
      cost_usd: number;
      /** The part of cost_usd held for calls killed before they reported a cost, and how many. */
      held_usd?: number;
      held_calls?: number;
      commit: string | null;
      control: 'continue' | 'stop' | null;
    }
  | {
      type: 'loop.finished';
      mode: 'milestone' | 'autonomous';
      ticks: number;
      verdicts: Record<string, number>;
      cost_usd: number;
      /** The part of cost_usd held for calls killed before they reported a cost, and how many. */
      held_usd?: number;
      held_calls?: number;
      calls: number;
      reason: string;
      exit: 'success' | 'stop' | 'blocked' | 'interrupted';
    }
  | {
      type: 'run.finished';
      state: WorkflowStateName;
      status: WorkflowFile['status'];
      reason: FailureReason | null;
      detail: string | null;
      pr_url: string | null;
      /** What the PR phase did, once it ran (null before, or in a workflow that ended earlier). */
      pr_outcome?: PrOutcome | null;
      next_steps: string[];
    }
  | {
      type: 'tick.finished';
      run_id: string;
      verdict: Verdict;
      code: Code;
      remediation: string;
      detail: string | null;
      blast_radius_line: string;
      /** The sandbox the tick's agents and verifications ran in (issue 14). */
      sandbox?: SandboxName | null;
      commit: string | null;
      report_path: string | null;
    }
  /** Seed 003: a deadf cycle passed VALIDATE and runs with this nonce. */
  | {
      type: 'cycle.started';
      cycle_id: string;
      nonce: string;
      iteration: number;
      phase: string;
      sub_step: string | null;
      mode: string;
    }
  /** The decide table's row (null: no row matched, which escalates) and the one action it chose. */
  | { type: 'cycle.decided'; action: string; row: number | null; reason: string }
  /** verify_task: the six deterministic checks, one verdict per criterion, the combined result. */
  | {
      type: 'cycle.verdict';
      task_id: string;
      checks: Record<string, boolean>;
      failures: string[];
      criteria: Array<{ id: string; kind: 'DET' | 'LLM'; answer: string; reason: string }>;
      result: string;
    }
  /** A notification file written to relais/notifications/ (path null when the mode keeps it silent). */
  | {
      type: 'cycle.notification';
      event: string;
      action: string;
      title: string;
      path: string | null;
      lines: string[];
    }
  /** The cycle's REPLY: the last line a cycle prints. */
  | {
      type: 'cycle.finished';
      cycle_id: string | null;
      action: string | null;
      reply: 'CYCLE_OK' | 'CYCLE_FAIL' | 'DONE';
      phase: string;
      details: string;
      code: string | null;
      remediation: string | null;
    }
  /** Seed 004: what one planner answer did, once the runner validated and executed it. */
  | {
      type: 'planner.actions';
      session_id: string;
      round: number;
      comments: Array<{ kind: string; content: string }>;
      gaps_added: Array<{
        id: number;
        question: string;
        respondent: 'reporter' | 'assignee';
        severity: string;
        why: string | null;
      }>;
      gaps_closed: Array<{
        id: number;
        reason: 'answered' | 'inferred' | 'not_relevant';
        note: string | null;
      }>;
      learnings_added: Array<{ id: number; type: string; content: string }>;
      open_gaps: number;
    }
  /** Seed 004 ready_for_spec_generation: the handoff, and the assumptions the humans must be told. */
  | {
      type: 'planner.ready';
      session_id: string;
      context_summary: string;
      closed_gap_ids: number[];
      learning_ids: number[];
      assumptions: Array<{ gap_id: number; question: string; note: string }>;
    }
  /**
   * Issue 19: a parallel lane (one task in its own runner-owned worktree) changed phase. `lane` is
   * the worktree's name (`task-3-1`); events the lane's tick emits carry the same name in `lane`.
   */
  | {
      type: 'lane.changed';
      lane: string;
      task: number;
      title: string;
      phase: LanePhase;
      worktree: string;
      detail: string | null;
      cost_usd: number;
    }
  /** Issue 19: the merge queue moved a lane one step (queued, rebasing, checking, landed or refused). */
  | {
      type: 'merge.changed';
      lane: string;
      step: 'queued' | 'rebasing' | 'checking' | 'landed' | 'conflict' | 'check_failed';
      detail: string | null;
      waiting: string[];
    }
  /**
   * Issue 19, best of N: every attempt at a task ended, and the runner chose by its own verdict
   * (verified first, then the smallest diff within scope). Persisted in WORKFLOW.json first (the
   * task's `selection`). `winner` goes to the merge queue; the others are discarded. Null: none
   * was verified, the task failed.
   */
  | {
      type: 'attempts.decided';
      task: number;
      title: string;
      winner: string | null;
      reason: string;
      candidates: AttemptRecord[];
    };

/**
 * Where a parallel lane is (issue 19). `waiting`: a usage limit of the account every lane shares;
 * `candidate`: a best-of attempt verified, waiting for its siblings; `discarded`: an attempt the
 * runner did not pick (its worktree and branch removed); `paused`: the pause key ended the lane
 * after its tick (the next start recovers its worktree and runs the task again).
 */
export type LanePhase =
  | 'started'
  | 'ticking'
  | 'waiting'
  | 'candidate'
  | 'merging'
  | 'landed'
  | 'retrying'
  | 'failed'
  | 'kept'
  | 'discarded'
  | 'paused';

/** `lane`: set on every event a parallel lane emitted (issue 19), so each line says whose it is. */
export type StampedEvent = EngineEvent & { at: string; lane?: string };

/** One event by its type (`EventOf<'agent.started'>`); consumers use these, never `Extract<>`. */
export type EventType = EngineEvent['type'];
export type EventOf<T extends EventType> = Extract<EngineEvent, { type: T }>;
/** One event as a subscriber receives it: with the time it was emitted. */
export type StampedEventOf<T extends EventType> = EventOf<T> & { at: string };
/** A handler for each event type (a reducer table, a formatter table). */
export type EventHandlers<R> = { [T in EventType]: (event: StampedEventOf<T>) => R };

export type AgentFinishedEvent = EventOf<'agent.finished'>;
export type FleetAttachedEvent = EventOf<'fleet.attached'>;
export type FleetStatusEvent = EventOf<'fleet.status'>;
export type AgentOutputEvent = EventOf<'agent.output'>;
export type AgentRetryEvent = EventOf<'agent.retry'>;
export type AgentStartedEvent = EventOf<'agent.started'>;
export type AgentToolEvent = EventOf<'agent.tool'>;
export type AttemptsDecidedEvent = EventOf<'attempts.decided'>;
export type BreakerChangedEvent = EventOf<'breaker.changed'>;
export type BudgetWarningEvent = EventOf<'budget.warning'>;
export type CycleDecidedEvent = EventOf<'cycle.decided'>;
export type CycleFinishedEvent = EventOf<'cycle.finished'>;
export type CycleNotificationEvent = EventOf<'cycle.notification'>;
export type CycleStartedEvent = EventOf<'cycle.started'>;
export type CycleVerdictEvent = EventOf<'cycle.verdict'>;
export type GateRequestedEvent = EventOf<'gate.requested'>;
export type GateResolvedEvent = EventOf<'gate.resolved'>;
export type JudgeFinishedEvent = EventOf<'judge.finished'>;
export type LaneChangedEvent = EventOf<'lane.changed'>;
export type LedgerUpdatedEvent = EventOf<'ledger.updated'>;
export type MergeChangedEvent = EventOf<'merge.changed'>;
export type LogEvent = EventOf<'log'>;
export type LoopFinishedEvent = EventOf<'loop.finished'>;
export type LoopTickEvent = EventOf<'loop.tick'>;
export type PhaseChangedEvent = EventOf<'phase.changed'>;
export type PlannerActionsEvent = EventOf<'planner.actions'>;
export type PlannerReadyEvent = EventOf<'planner.ready'>;
export type RunFinishedEvent = EventOf<'run.finished'>;
export type RunStartedEvent = EventOf<'run.started'>;
export type TaskProposedEvent = EventOf<'task.proposed'>;
export type TaskUpdatedEvent = EventOf<'task.updated'>;
export type TickFinishedEvent = EventOf<'tick.finished'>;
export type VerifyFinishedEvent = EventOf<'verify.finished'>;
export type VerifyStartedEvent = EventOf<'verify.started'>;
export type WorkflowChangedEvent = EventOf<'workflow.changed'>;
export type WorkflowStartedEvent = EventOf<'workflow.started'>;
export type WorkflowWaitingEvent = EventOf<'workflow.waiting'>;
export type WorkflowSpendEvent = EventOf<'workflow.spend'>;

type Listener = (event: StampedEvent) => void;

/**
 * The bus a parallel lane's tick emits on (issue 19): every event goes to the workflow's bus with
 * the lane's name in `lane`, so plain lines, NDJSON and the app can tell lanes apart.
 */
export function laneBus(parent: EngineBus, lane: string): EngineBus {
  const bus = new EngineBus();
  bus.emit = (event: EngineEvent) => parent.emit({ ...event, lane } as EngineEvent);
  return bus;
}

/**
 * A synchronous bus. Events emitted before anyone subscribes are kept (up to a cap, oldest dropped
 * first) and replayed to the first subscriber, so a front end attached late misses nothing early.
 */
export class EngineBus {
  private readonly listeners = new Set<Listener>();
  private backlog: StampedEvent[] | null = [];
  private dropped = 0;

  constructor(
    private readonly now: () => Date = () => new Date(),
    private readonly backlogCap = 5000,
  ) {}

  emit(event: EngineEvent): void {
    const stamped = { ...event, at: this.now().toISOString() } as StampedEvent;
    if (this.backlog) {
      this.backlog.push(stamped);
      if (this.backlog.length > this.backlogCap) {
        this.backlog.shift();
        this.dropped++;
      }
      return;
    }
    for (const listener of this.listeners) listener(stamped);
  }

  /** An event emitted elsewhere, with its own time (a fleet run's events, read from the database). */
  replay(event: StampedEvent): void {
    if (this.backlog) {
      this.backlog.push(event);
      if (this.backlog.length > this.backlogCap) {
        this.backlog.shift();
        this.dropped++;
      }
      return;
    }
    for (const listener of this.listeners) listener(event);
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    if (this.backlog) {
      const pending = this.backlog;
      this.backlog = null;
      if (this.dropped > 0) {
        listener({
          type: 'log',
          level: 'warn',
          message: `${this.dropped} early events were dropped`,
          at: this.now().toISOString(),
        });
      }
      for (const event of pending) listener(event);
    }
    return () => {
      this.listeners.delete(listener);
    };
  }
}
