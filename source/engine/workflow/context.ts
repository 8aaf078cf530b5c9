import type { AgentRunner } from '../agents/agent-run.js';
import type { CycleRunners } from '../cycle/context.js';
import type { EngineBus } from '../events.js';
import type { GatePort } from '../gates.js';
import { readRepoFacts } from '../judge/repo.js';
import type { FailureReason, TaskRecord, WorkflowFile, WorkflowStateName } from '../protocol/workflow.js';
import { breakerFrom, reportBreakerOnBus } from '../supervise/breaker-settings.js';
import type { BreakerEvent, CircuitBreaker } from '../supervise/circuit-breaker.js';
import type { Clock } from '../supervise/clock.js';
import type { TickSetup } from '../tick/preflight.js';
import type { Prd } from './prd.js';
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
  /** Issue 19: `ralphy start --parallel N`, above `workflow.parallel` in the config. */
  readonly parallel?: number;
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

  update(patch: Partial<WorkflowFile>): Promise<void> {
    this.workflow = { ...this.workflow, ...patch, updated_at: this.now().toISOString() };
    const snapshot = this.workflow;
    // One failed write must not poison the queue: the next one writes the whole state again.
    const write = this.writes.catch(() => undefined).then(() => writeWorkflow(this.setup.paths, snapshot));
    this.writes = write;
    return write;
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

  async addCost(usd: number): Promise<void> {
    if (usd > 0) await this.update({ cost_usd: Math.round((this.workflow.cost_usd + usd) * 1e6) / 1e6 });
  }

  /** The workflow-wide spend cap (`workflow.max_cost_usd`): a reason to stop, or null. */
  overBudget(): string | null {
    const cap = this.workflow.max_cost_usd;
    if (cap === null || this.workflow.cost_usd < cap) return null;
    return `the workflow spent ${usd(this.workflow.cost_usd)}, at or above workflow.max_cost_usd ${usd(cap)}`;
  }

  /** Updates one task record (and announces it); unknown numbers are ignored. */
  async updateTask(number: number, patch: Partial<TaskRecord>): Promise<void> {
    const before = this.workflow.tasks.find((t) => t.number === number);
    const tasks = this.workflow.tasks.map((t) => (t.number === number ? { ...t, ...patch } : t));
    const task = tasks.find((t) => t.number === number);
    if (!task) return;
    await this.update({
      tasks,
      tasks_completed: tasks.filter((t) => t.status === 'completed').length,
      tasks_total: tasks.length,
    });
    // Front ends hear about what they show: status, claim, verification (not tick counters).
    if (before && sameView(before, task)) return;
    this.bus.emit({
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

  /** Persists and announces a breaker warning or OPEN with the seed's log lines. */
  reportBreaker(breaker: CircuitBreaker, event: BreakerEvent): void {
    reportBreakerOnBus(this.bus, breaker)(event);
    this.updateLater({ circuit_breaker: breaker.snapshot() });
  }

  /** The breaker callback every supervised agent of a phase gets (a null breaker reports nothing). */
  breakerReporter(breaker: CircuitBreaker | null): (event: BreakerEvent) => void {
    return (event) => {
      if (breaker) this.reportBreaker(breaker, event);
    };
  }

  /** A pause, resume or fresh breaker: persisted and announced without a log line. */
  showBreaker(breaker: CircuitBreaker | null): void {
    const snapshot = breaker?.snapshot() ?? {
      ...this.workflow.circuit_breaker,
      state: 'closed' as const,
      attempts: 0,
      last_trigger: null,
    };
    this.bus.emit({ type: 'breaker.changed', breaker: snapshot, trigger: null, detail: null, log: [] });
    this.updateLater({ circuit_breaker: snapshot });
  }
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
