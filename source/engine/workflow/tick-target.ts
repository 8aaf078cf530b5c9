import type { UsageLimit } from '../agents/claude-code/usage-limit.js';
import type { EngineBus } from '../events.js';
import type { Git } from '../judge/git.js';
import type { TaskRecord } from '../protocol/workflow.js';
import type { CircuitBreaker } from '../supervise/circuit-breaker.js';
import type { PhaseResult, WorkflowContext } from './context.js';
import type { PhaseSignal } from './phase-helpers.js';
import { type ChecksOutcome, runProjectChecks } from './project-checks.js';
import { commitTaskStatus } from './task-status.js';

/**
 * Where the `ticks` engine runs a task's ticks: the main worktree (one lane, today's behaviour)
 * or a parallel lane's runner-owned worktree (issue 19, engine/parallel/). The judged tick is the
 * same either way; only the tree it runs in, the bus it reports on, and how a verified task
 * reaches the integration branch differ.
 */

/** A best-of attempt the runner did not pick (issue 19): it ends without completing the task. */
export interface Discarded {
  readonly kind: 'discarded';
  readonly why: string;
}

/** How one task's ticks end: a phase result, or (an attempt of best of N) discarded. */
export type TaskEnd = PhaseResult | Discarded;

export type Landing =
  /** On the integration branch, with the commits that put it there. */
  | { kind: 'landed'; commits: string[] }
  /** Not landed: run the task again, telling the orchestrator why. */
  | { kind: 'again'; note: string }
  | { kind: 'end'; result: PhaseResult }
  | Discarded;

/** What one tick spent, as the tick reported it. */
export interface TickSpend {
  readonly costUsd: number;
  readonly calls: number;
}

export interface TickTarget {
  /** The lane's name, or null for the main worktree. */
  readonly lane: string | null;
  /** The tree the tick runs in (a lane may move to a fresh worktree after a failed merge). */
  root(): string;
  /** Git in that tree (progress evidence for the breaker). */
  git(): Pick<Git, 'run'>;
  readonly bus: EngineBus;
  /** What the orchestrator's goal adds for this target (a best-of attempt says which), or null. */
  readonly brief?: string | null;
  /** The project's checks in that tree. */
  checks(signal: AbortSignal): Promise<ChecksOutcome>;
  /** A verified task reaches the integration branch (its TASKS.md status committed), or why not. */
  land(task: TaskRecord, tickCommit: string | null, signal: AbortSignal): Promise<Landing>;
  /** Before each tick: null to go on, or how the task ends (the shared budget, issue 19). */
  beforeTick?(signal: AbortSignal): Promise<PhaseResult | null>;
  /** After each tick, with what it cost. */
  afterTick?(spent: TickSpend): void;
  /**
   * A usage limit ended a tick: wait for the reset, then null to run the task again (or how it
   * ends). Parallel lanes wait together: they share the account (issue 19).
   */
  waitOutLimit?(
    ctx: WorkflowContext,
    limit: UsageLimit,
    breaker: CircuitBreaker | null,
    phase: PhaseSignal,
  ): Promise<PhaseResult | null>;
  /** Before each agent call of a tick (a lane waits while the shared account is limited). */
  beforeAgentCall?(breaker: CircuitBreaker | null, signal: AbortSignal): Promise<void>;
}

/** The lane and task a gate belongs to, for its title and events; null in the main tree. */
export function laneOf(target: TickTarget, task: TaskRecord): { name: string; task: number } | null {
  return target.lane === null ? null : { name: target.lane, task: task.number };
}

/** The main worktree: the tick's own commit is already on the branch; the status is committed next. */
export function mainTarget(ctx: WorkflowContext): TickTarget {
  return {
    lane: null,
    root: () => ctx.setup.facts.root,
    git: () => ctx.setup.git,
    bus: ctx.bus,
    checks: (signal) => runProjectChecks(ctx, signal),
    land: async (task, tickCommit) => {
      const statusCommit = await commitTaskStatus(ctx, task.number, 'completed');
      return { kind: 'landed', commits: [tickCommit, statusCommit].filter((c): c is string => c !== null) };
    },
  };
}
