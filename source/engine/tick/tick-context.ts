import type { AgentRunner, PrestartedCall } from '../agents/agent-run.js';
import type { EngineBus } from '../events.js';
import type { IgnoredSnapshot } from '../judge/ignored-files.js';
import type { VerificationIgnored } from '../judge/rollback.js';
import type { Code, Verdict } from '../protocol/codes.js';
import type { Report } from '../protocol/report.js';
import type { BuildTask, Control } from '../protocol/task.js';
import type { TickSetup } from '../session/preflight.js';
import type { Clock } from '../supervise/clock.js';
import type { RunTotals, TickSpent } from '../workspace/ledger.js';
import type { TickLedger } from './tick-ledger.js';
import type { TickRecord } from './tick-record.js';

/** What a caller gives a tick, what it gets back, and what the phases share while it runs. */

export interface TickOptions {
  readonly root: string;
  readonly bus: EngineBus;
  /** Aborted on SIGINT/SIGTERM: children are killed, the tick rolls back and reports. */
  readonly signal: AbortSignal;
  readonly env: NodeJS.ProcessEnv;
  readonly command?: string;
  readonly now?: () => Date;
  /** The agent adapter; Claude Code unless a test or another provider says otherwise. */
  readonly agentRunner?: (setup: TickSetup) => AgentRunner;
  /**
   * Milestone mode of `relais loop`: a task for another milestone than the ledger's current one
   * stops before building (a ledger without a milestone adopts the first).
   */
  readonly holdMilestone?: boolean;
  /** The caller (a workflow) already holds the workspace lock for the whole run. */
  readonly lockHeld?: boolean;
  /** Workspace files a caller writes while the builder runs (a workflow's state): not builder changes. */
  readonly runnerWrites?: readonly string[];
  /** Replaces the project goal in the orchestrator prompt (a workflow names the current task). */
  readonly goal?: string;
  /** Run-wide caps of `relais loop`, checked in preflight with the per-milestone ones. */
  readonly runCaps?: { readonly totals: RunTotals; readonly maxTicks: number | null };
  /**
   * Checked on the orchestrator's task before anything is built: a reason to refuse it (a plan
   * that already failed for this task, issue 15), or null. A refusal ends the tick
   * STOP_PLAN_REPEATED.
   */
  readonly refusePlan?: (task: BuildTask) => string | null;
  /**
   * Whether an agent call of this tick ended on a usage or rate limit (the caller watches through
   * wrapRunner). Issue 15: such a tick was stopped by the limit, not by its work, so unless it
   * succeeded it is given back to the tick budget (STATE.json `ticks`, the run's tick count);
   * its calls and cost stay counted, they were spent.
   */
  readonly endedByLimit?: () => boolean;
  /** Wraps whichever agent runner the tick uses (usage-limit watching for `relais run` and `loop`). */
  readonly wrapRunner?: (runner: AgentRunner) => AgentRunner;
  /** Time for usage-limit waits between ticks; the real clock unless a test moves a fake one. */
  readonly clock?: Clock;
}

export interface TickResult {
  readonly verdict: Verdict;
  readonly code: Code;
  readonly detail: string | null;
  readonly report: Report | null;
  /** False when the tick was refused before it started (preflight, the lock): no tick ran. */
  readonly started: boolean;
  /** True when the tick ended because of the abort signal (the CLI exits 130). */
  readonly interrupted: boolean;
  readonly control: Control | null;
  /** The milestone the ledger is on after the tick. */
  readonly milestone: string | null;
  /** Whether the ledger crossed the warning fraction (a loop's soft stop). */
  readonly budgetWarning: boolean;
  /** What this tick spent, for run-wide caps. */
  readonly spent: TickSpent;
  /** The builder's question for the human, when it asked one instead of answering (issue 15). */
  readonly builderQuestion: string | null;
  /** The orchestrator's question, when it asked one instead of proposing a task (issue 15). */
  readonly orchestratorQuestion: string | null;
  /**
   * The builder's writes the runner refused before they happened (the scope hook's reasons): the
   * tick may still succeed on what it did write, but it did not do what it set out to.
   */
  readonly refusedWrites: readonly string[];
}

/** Shared by the phases of one tick that holds the lock and passed preflight. */
export interface TickContext {
  readonly setup: TickSetup;
  readonly record: TickRecord;
  readonly options: TickOptions;
  readonly now: () => Date;
  readonly ledger: TickLedger;
  readonly runner: AgentRunner;
  /** The abort signal and the max_tick_seconds deadline together. */
  readonly signal: AbortSignal;
  /** Milliseconds an agent call may still take: up to max_tick_seconds, less a small margin. */
  remainingMs(): number;
  /** Why the tick is being cut short (deadline or signal), or null. */
  interruption(): string | null;
  /** Ignored files as VERIFY found them, once it starts: what it changes is the runner's own. */
  verifyIgnored: VerificationIgnored | null;
  /** The builder's CLI started on the orchestrator's answer (prestart-agents.ts), once it is. */
  builderAhead: BuilderAhead | null;
}

/** What the tick did for its builder on the orchestrator's answer, before the build. */
export interface BuilderAhead {
  /** The ignored files its sandbox can write, pictured before it was started, and for which set. */
  readonly ignored: Promise<{
    readonly writable: string;
    readonly snapshot: IgnoredSnapshot;
    readonly atMs: number;
  } | null>;
  /** Its process, started once that picture was taken (null: none was). */
  readonly process: Promise<PrestartedCall | null>;
}

export function relativeToRoot(setup: TickSetup, path: string): string {
  return path.slice(setup.facts.root.length + 1);
}
