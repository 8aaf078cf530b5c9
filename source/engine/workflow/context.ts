import type { AgentRunner } from '../agents/agent-run.js';
import type { CycleRunners } from '../cycle/context.js';
import { type EngineBus, laneBus } from '../events.js';
import type { GatePort } from '../gates.js';
import { readRepoFacts } from '../judge/repo.js';
import type { RelaisConfig } from '../protocol/config.js';
import { spendWithHeld } from '../protocol/money.js';
import {
  type BreakerSnapshot,
  BUDGET_PHASES,
  type BudgetPhase,
  type FailureReason,
  KEPT_LANE_BREAKERS,
  type TaskRecord,
  type WorkflowFile,
  type WorkflowStateName,
} from '../protocol/workflow.js';
import type { Prd } from '../session/prd.js';
import type { TickSetup } from '../session/preflight.js';
import { breakerFrom, reportBreakerOnBus } from '../supervise/breaker-settings.js';
import type { BreakerEvent, CircuitBreaker } from '../supervise/circuit-breaker.js';
import type { Clock } from '../supervise/clock.js';
import { writeWorkflow } from './workflow-store.js';

/** What every phase of one `ralphy start` shares. */

export interface WorkflowOptions {
  readonly root: string;
  readonly bus: EngineBus;
  /** Aborted by Ctrl-C (the workflow is interrupted, resumable) or `ralphy abort` (FAILED, aborted). */
  readonly signal: AbortSignal;
  readonly env: NodeJS.ProcessEnv;
  readonly gates: GatePort;
  readonly clock: Clock;
  readonly now?: () => Date;
  /**
   * `ralphy start --engine`: the implementation engine of a new workflow, instead of
   * workflow.implementation_engine. It is recorded in WORKFLOW.json; a resume keeps that one.
   */
  readonly engine?: WorkflowFile['engine'];
  /**
   * `ralphy start --issue`: the PRD is this GitHub issue once `relais plan --issue` made it ready
   * for the spec (seed 004's handoff), and the workflow reports back on it at the end.
   */
  readonly issue?: number;
  /** The agent adapter; Claude Code unless a test says otherwise. */
  readonly agentRunner?: (setup: TickSetup) => AgentRunner;
  /** The `cycle` engine's three roles; from `cycle.agents` (Codex, Claude) unless a test says otherwise. */
  readonly cycleRunners?: (setup: TickSetup) => CycleRunners;
  /**
   * Tells an abort (`ralphy abort`, FAILED) from an interrupt (Ctrl-C, resumable) once the signal
   * fired. runWorkflow sets it from the abort requests it watches; a caller may add its own.
   */
  readonly abortRequested?: () => boolean;
  /**
   * Who asked for the abort, in words for the failure detail ("the abort key (a) in the app"):
   * issue 16 item 6, an `a` in the app must not read "aborted by ralphy abort".
   */
  readonly abortedBy?: () => string;
  /**
   * The fleet (issue 20): the URL of a pull request already open for this head branch, found
   * with the resolved gh program, so a PR phase that runs again does not open a second one.
   */
  readonly existingPullRequest?: (gh: string, branch: string) => Promise<string | null>;
  /**
   * The fleet (issue 20): asked before each state's phase runs; true stops the workflow there,
   * interrupted and resumable, so each phase can be its own durable step.
   */
  readonly pauseBefore?: (state: WorkflowStateName) => boolean;
  /**
   * The app's pause key `p` (issue 16 item 11): once true, the running agent finishes and its
   * work is judged and recorded as usual, but no further agent starts: the workflow stops before
   * its next phase (or its next tick), interrupted and resumable with `ralphy start`.
   */
  readonly pauseRequested?: () => boolean;
  /** Issue 19: `ralphy start --parallel N`, above `workflow.parallel` in the config. */
  readonly parallel?: number;
  /**
   * Issue 19, best of N: `ralphy start --attempts K`: K builders try every task, each in its own
   * worktree, and only the runner's pick lands. Above `workflow.best_of`, which is for risky tasks.
   */
  readonly attempts?: number;
}

export type PhaseResult =
  | { kind: 'next'; event: 'ready' | 'spec_done' | 'exit_signal' | 'approve' | 'reject' }
  | { kind: 'fail'; reason: FailureReason; detail: string }
  | { kind: 'stopped' }
  /** A yes/no gate nobody can answer (no terminal, no --yes): no transition; the gate waits. */
  | { kind: 'unanswered'; detail: string };

export type BreakerPhase = 'PLANNING' | 'SPECIFICATION' | 'IMPLEMENTATION' | 'QA' | 'PR';

/** The running phase's timeout clock, which a human's time does not count against. */
export interface PausableTimeout {
  pause(): void;
  resume(): void;
}

export class WorkflowContext {
  /** Writes are queued so a breaker event and a phase update never interleave on disk. */
  private writes: Promise<void> = Promise.resolve();
  /** Set by phaseSignal while a phase runs: gates and usage-limit waits pause it. */
  activePhase: PausableTimeout | null = null;
  /** Gates open at once (parallel lanes may ask together), and the status before the first. */
  private openWaits = 0;
  private statusBeforeWaits: WorkflowFile['status'] = 'running';

  constructor(
    public setup: TickSetup,
    readonly options: WorkflowOptions,
    public workflow: WorkflowFile,
    readonly prd: Prd,
    readonly runner: AgentRunner,
  ) {}

  now(): Date {
    return this.options.now?.() ?? new Date();
  }

  get bus(): EngineBus {
    return this.options.bus;
  }

  /**
   * Where an event goes: the workflow's bus, or for what a parallel lane causes (issue 19) the
   * same bus with the lane's name on every event, so each plain line and NDJSON event says whose.
   */
  busFor(lane: string | null): EngineBus {
    return lane === null ? this.bus : laneBus(this.bus, lane);
  }

  update(patch: Partial<WorkflowFile>): Promise<void> {
    this.workflow = { ...this.workflow, ...patch, updated_at: this.now().toISOString() };
    const snapshot = this.workflow;
    // One failed write must not poison the queue: the next one writes the whole state again.
    const write = this.writes.catch(() => undefined).then(() => writeWorkflow(this.setup.paths, snapshot));
    this.writes = write;
    return write;
  }

  /** A gate opens: the workflow is `waiting` until the last open gate is answered. */
  async openWait(): Promise<void> {
    if (this.openWaits++ === 0) this.statusBeforeWaits = this.workflow.status;
    await this.update({ status: 'waiting' });
  }

  /** A gate was answered (`patch` records it); the status goes back once no gate is open. */
  async closeWait(patch: Partial<WorkflowFile>): Promise<void> {
    this.openWaits = Math.max(0, this.openWaits - 1);
    const before = this.statusBeforeWaits;
    const status = this.openWaits > 0 ? 'waiting' : before === 'waiting' ? 'running' : before;
    await this.update({ ...patch, status });
  }

  /** For updates nobody waits on (breaker snapshots): a failed write is reported, not thrown. */
  updateLater(patch: Partial<WorkflowFile>): void {
    this.update(patch).catch((error: Error) =>
      this.bus.emit({ type: 'log', level: 'warn', message: `WORKFLOW.json not written: ${error.message}` }),
    );
  }

  /** Moves to a §8 state: persisted first, then announced. */
  async enter(
    state: WorkflowStateName,
    status: WorkflowFile['status'],
    extra: Partial<WorkflowFile> = {},
  ): Promise<void> {
    await this.update({ state, status, phase: state.toLowerCase(), ...extra });
    this.bus.emit({
      type: 'workflow.changed',
      state,
      status,
      reason: this.workflow.failure_reason,
      detail: this.workflow.failure_detail,
    });
  }

  /** HEAD moves with every commit the workflow makes: phases judge against the current one. */
  async refreshFacts(): Promise<void> {
    const read = await readRepoFacts(this.setup.git, this.setup.facts.root);
    if (read.ok) this.setup = { ...this.setup, facts: read.facts };
  }

  /**
   * A usage-limit wait starts (`until`) or ends (null): shown in WORKFLOW.json, and the phase
   * timeout does not run meanwhile (the limit is nobody's slowness).
   */
  async waiting(until: Date | null): Promise<void> {
    if (until) this.activePhase?.pause();
    else this.activePhase?.resume();
    await this.update({ waiting_until: until?.toISOString() ?? null, status: until ? 'waiting' : 'running' });
  }

  /**
   * What finished agent calls reported: the workflow's total and the running phase's own spend
   * and call count, in one write (one ledger for both, so the header, the phase timeline and
   * `ralphy status` never disagree). `unreported`: the part of `usd` that is the maximum held for
   * calls that never reported a cost (it guards the caps, but is shown apart, never as spend).
   */
  async addCost(
    usd: number,
    calls = 1,
    lane: string | null = null,
    unreported: Unreported = NONE_UNREPORTED,
  ): Promise<void> {
    const spent = Math.max(0, usd);
    if (spent === 0 && calls === 0 && unreported.calls === 0) return;
    const phase = budgetPhaseOf(this.workflow.state);
    const phases = { ...this.workflow.phases };
    if (phase) {
      const before = phases[phase] ?? { ...phaseCaps(this.setup.config, phase), ...zeroSpend() };
      phases[phase] = { ...before, ...addSpend(before, spent, calls, unreported) };
    }
    await this.update({ ...addSpend(this.workflow, spent, 0, unreported), phases });
    if (phase) {
      const now = phases[phase];
      if (now)
        this.busFor(lane).emit({
          type: 'workflow.spend',
          phase,
          ...now,
          total_cost_usd: this.workflow.cost_usd,
          total_unreported_usd: this.workflow.unreported_usd,
          total_unreported_calls: this.workflow.unreported_calls,
        });
    }
  }

  /**
   * One agent call ended outside a tick (planning, specification, QA, the cycle engine). One that
   * never reported its cost (killed, interrupted) is counted as a call of unknown cost; these calls
   * reserve nothing beforehand, so nothing is held for it: what it spent is not known, not $0.
   */
  async addCall(usd: number, reported: boolean): Promise<void> {
    await this.addCost(usd, 1, null, reported ? NONE_UNREPORTED : { usd: 0, calls: 1 });
  }

  /**
   * The workflow-wide spend cap (`workflow.max_cost_usd`), then the running phase's own caps
   * (`workflow.phases.<phase>`): the reason to stop, or null. Checked before each agent call
   * starts; a call already running finishes and is counted.
   */
  overBudget(): { reason: FailureReason; detail: string } | null {
    const cap = this.workflow.max_cost_usd;
    if (cap !== null && this.workflow.cost_usd >= cap)
      return {
        reason: 'budget_exhausted',
        detail: `the workflow's spend, ${spendWithHeld(this.workflow.cost_usd, heldOf(this.workflow))}, is at or above workflow.max_cost_usd ${usd(cap)}`,
      };
    const phase = budgetPhaseOf(this.workflow.state);
    const spend = phase ? this.workflow.phases[phase] : undefined;
    if (!phase || !spend) return null;
    const key = `workflow.phases.${phase.toLowerCase()}`;
    if (spend.max_cost_usd !== null && spend.cost_usd >= spend.max_cost_usd)
      return {
        reason: 'phase_budget_exhausted',
        detail: `${phase}'s spend, ${spendWithHeld(spend.cost_usd, heldOf(spend))} in ${spend.calls} agent call(s), is at or above ${key}.max_cost_usd ${usd(spend.max_cost_usd)}`,
      };
    if (spend.max_calls !== null && spend.calls >= spend.max_calls)
      return {
        reason: 'phase_budget_exhausted',
        detail: `${phase} made ${spend.calls} agent call(s), at or above ${key}.max_calls ${spend.max_calls}`,
      };
    return null;
  }

  /** The phases' caps as the config says now (a fresh start or a resume): spend so far is kept. */
  withPhaseCaps(): WorkflowFile['phases'] {
    const phases = { ...this.workflow.phases };
    for (const phase of BUDGET_PHASES) {
      const caps = phaseCaps(this.setup.config, phase);
      phases[phase] = { ...(phases[phase] ?? zeroSpend()), ...caps };
    }
    return phases;
  }

  /**
   * Updates one task record (and announces it, as `lane`'s when a parallel lane caused it);
   * unknown numbers are ignored. `patch` may be a function of the record as it is now, so lanes
   * working on the same task never write over each other's counts.
   */
  async updateTask(
    number: number,
    patch: Partial<TaskRecord> | ((task: TaskRecord) => Partial<TaskRecord>),
    lane: string | null = null,
  ): Promise<void> {
    const before = this.workflow.tasks.find((t) => t.number === number);
    const tasks = this.workflow.tasks.map((t) =>
      t.number === number ? { ...t, ...(typeof patch === 'function' ? patch(t) : patch) } : t,
    );
    const task = tasks.find((t) => t.number === number);
    if (!task) return;
    await this.update({
      tasks,
      tasks_completed: tasks.filter((t) => t.status === 'completed').length,
      tasks_total: tasks.length,
    });
    // Front ends hear about what they show: status, claim, verification (not tick counters).
    if (before && sameView(before, task)) return;
    this.busFor(lane).emit({
      type: 'task.updated',
      number: task.number,
      title: task.title,
      status: task.status,
      claimed: task.claimed,
      verified: task.verified,
      verdict: task.verdict,
    });
  }

  /** One breaker per phase (seed 002 §6.1), its state kept in WORKFLOW.json and on the bus. */
  breakerFor(phase: BreakerPhase): CircuitBreaker | null {
    return breakerFrom(this.setup.config, phase, () => this.options.clock.now());
  }

  /**
   * Persists and announces a breaker warning or OPEN with the seed's log lines. A parallel lane's
   * breaker (issue 19: one per lane) is kept under its name and announced as the lane's.
   */
  reportBreaker(breaker: CircuitBreaker, event: BreakerEvent, lane: string | null = null): void {
    reportBreakerOnBus(this.busFor(lane), breaker)(event);
    this.saveBreaker(lane, breaker.snapshot());
  }

  /** The breaker callback every supervised agent of a phase (or lane) gets; a null breaker reports nothing. */
  breakerReporter(breaker: CircuitBreaker | null, lane: string | null = null): (event: BreakerEvent) => void {
    return (event) => {
      if (breaker) this.reportBreaker(breaker, event, lane);
    };
  }

  /** A pause, resume or fresh breaker: persisted and announced without a log line. */
  showBreaker(breaker: CircuitBreaker | null, lane: string | null = null): void {
    // A lane without a breaker (turned off) has nothing to show; the phase shows a closed one.
    if (lane !== null && !breaker) return;
    const snapshot = breaker?.snapshot() ?? {
      ...this.workflow.circuit_breaker,
      state: 'closed' as const,
      attempts: 0,
      last_trigger: null,
    };
    this.busFor(lane).emit({
      type: 'breaker.changed',
      breaker: snapshot,
      trigger: null,
      detail: null,
      log: [],
    });
    this.saveBreaker(lane, snapshot);
  }

  private saveBreaker(lane: string | null, snapshot: BreakerSnapshot): void {
    if (lane === null) {
      this.updateLater({ circuit_breaker: snapshot });
      return;
    }
    const kept = Object.entries({ ...this.workflow.lane_breakers, [lane]: snapshot });
    // The newest lanes are kept; a lane that ended long ago gives its place.
    this.updateLater({ lane_breakers: Object.fromEntries(kept.slice(-KEPT_LANE_BREAKERS)) });
  }
}

function budgetPhaseOf(state: WorkflowStateName): BudgetPhase | null {
  return (BUDGET_PHASES as readonly string[]).includes(state) ? (state as BudgetPhase) : null;
}

function phaseCaps(
  config: RelaisConfig,
  phase: BudgetPhase,
): { max_cost_usd: number | null; max_calls: number | null } {
  const caps = config.workflow.phases[phase.toLowerCase() as Lowercase<BudgetPhase>];
  return { max_cost_usd: caps.max_cost_usd, max_calls: caps.max_calls };
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

function sameView(a: TaskRecord, b: TaskRecord): boolean {
  return (
    a.status === b.status &&
    a.claimed === b.claimed &&
    a.verified === b.verified &&
    a.verdict === b.verdict &&
    a.title === b.title
  );
}

/** Dollars as a human reads them: cents, or more digits for amounts under a dollar. */
function usd(amount: number): string {
  return `$${amount >= 1 ? amount.toFixed(2) : amount.toFixed(4).replace(/0{1,2}$/, '')}`;
}

/** Calls that never reported a cost: the maximum held for them, and how many. */
export interface Unreported {
  readonly usd: number;
  readonly calls: number;
}

const NONE_UNREPORTED: Unreported = { usd: 0, calls: 0 };

function zeroSpend(): { cost_usd: number; calls: number; unreported_usd: number; unreported_calls: number } {
  return { cost_usd: 0, calls: 0, unreported_usd: 0, unreported_calls: 0 };
}

interface SpendFields {
  readonly cost_usd: number;
  readonly unreported_usd: number;
  readonly unreported_calls: number;
}

/** A spend record with `usd` (of which `unreported` is held, not spent) and `calls` more. */
function addSpend<T extends SpendFields & { calls?: number }>(
  before: T,
  usd: number,
  calls: number,
  unreported: Unreported,
): SpendFields & { calls?: number } {
  return {
    cost_usd: round6(before.cost_usd + usd),
    ...(before.calls === undefined ? {} : { calls: before.calls + calls }),
    unreported_usd: round6(Math.max(0, before.unreported_usd + unreported.usd)),
    unreported_calls: Math.max(0, before.unreported_calls + unreported.calls),
  };
}

/** What a spend record holds for calls that never reported a cost. */
function heldOf(spend: { unreported_usd: number; unreported_calls: number }): Unreported {
  return { usd: spend.unreported_usd, calls: spend.unreported_calls };
}
