import type { EngineBus, LanePhase } from '../events.js';
import { laneBus } from '../events.js';
import { Git } from '../judge/git.js';
import type { TaskRecord } from '../protocol/workflow.js';
import type { CircuitBreaker } from '../supervise/circuit-breaker.js';
import type { PhaseResult, WorkflowContext } from '../workflow/context.js';
import { implementTask } from '../workflow/implement-ticks.js';
import { interruptionOf, pauseRequested } from '../workflow/interruption.js';
import { type PhaseSignal, stopped } from '../workflow/phase-helpers.js';
import { runProjectChecksIn } from '../workflow/project-checks.js';
import type { TaskEnd, TickSpend, TickTarget } from '../workflow/tick-target.js';
import { worstCaseTick } from '../workspace/ledger.js';
import type { AccountPause } from './account-pause.js';
import type { BestOfGroup } from './best-of-group.js';
import { landLane } from './lane-landing.js';
import type { MergeQueue } from './merge-queue.js';
import type { BudgetReservations, Spend } from './reservations.js';
import type { Worktree, WorktreeManager } from './worktrees.js';

/** What every lane of one IMPLEMENTATION shares (issue 19). */
export interface LanesShared {
  readonly ctx: WorkflowContext;
  readonly phase: PhaseSignal;
  readonly worktrees: WorktreeManager;
  readonly queue: MergeQueue;
  readonly budget: BudgetReservations;
  readonly account: AccountPause;
}

/** One of the K attempts at a task (best of N), and the group that chooses among them. */
export interface AttemptSlot {
  /** 1 to K. */
  readonly index: number;
  readonly group: BestOfGroup;
}

/** How a lane ended: the task's end (null: landed), and the lane (its last tree, the ones it left). */
export interface LaneEnd {
  readonly result: TaskEnd | null;
  readonly lane: Lane;
}

/**
 * One lane: a task (or one attempt at it) in its own runner-owned worktree, its ticks the same
 * judged ticks as with one lane (workflow/implement-ticks.ts, through the lane's tick target),
 * its own circuit breaker, its share of the one budget, paused with every lane by a usage limit,
 * and its verified work landed through the merge queue (lane-landing.ts).
 */
export class Lane {
  bus: EngineBus;
  /** What the lane's ticks cost so far. */
  spent = 0;
  /** Failed landings of the current task (a conflict, a check failing on the merged tree). */
  mergeFailures = 0;
  /** Worktrees the lane moved away from (kept for a human, or discarded with the attempt). */
  readonly left: Worktree[] = [];
  // Seed 002 §6.1: the breaker supervises each agent process; each lane has its own.
  readonly breaker: CircuitBreaker | null;

  private constructor(
    readonly shared: LanesShared,
    readonly task: TaskRecord,
    /** The task's declared Scope (TASKS.md), null when it runs alone. */
    readonly scope: readonly string[] | null,
    readonly slot: AttemptSlot | null,
    public tree: Worktree,
  ) {
    this.bus = laneBus(shared.ctx.bus, tree.name);
    this.breaker = shared.ctx.breakerFor('IMPLEMENTATION');
  }

  static async open(
    shared: LanesShared,
    task: TaskRecord,
    scope: readonly string[] | null,
    slot: AttemptSlot | null,
  ): Promise<Lane> {
    const { ctx } = shared;
    const tree = await shared.worktrees.create(task.number, ctx.setup.facts.head, ctx.now());
    const lane = new Lane(shared, task, scope, slot, tree);
    const attempt = slot ? `attempt ${slot.index} of ${slot.group.of} (best of ${slot.group.of}), ` : '';
    lane.show('started', `${attempt}from ${ctx.setup.facts.head.slice(0, 12)}`);
    ctx.showBreaker(lane.breaker, tree.name);
    return lane;
  }

  get name(): string {
    return this.tree.name;
  }

  get ctx(): WorkflowContext {
    return this.shared.ctx;
  }

  show(phase: LanePhase, detail: string | null = null): void {
    this.ctx.bus.emit({
      type: 'lane.changed',
      lane: this.tree.name,
      task: this.task.number,
      title: this.task.title,
      phase,
      worktree: this.tree.path,
      detail,
      cost_usd: this.spent,
    });
  }

  /** The work in this tree cannot land: it is kept (why recorded), and the lane goes on in a fresh one. */
  async moveToFreshTree(why: string): Promise<void> {
    const { ctx, worktrees } = this.shared;
    await worktrees.keep(this.tree, this.task.number, why, ctx.now());
    this.show('kept', why);
    this.left.push(this.tree);
    await ctx.refreshFacts();
    this.tree = await worktrees.create(this.task.number, ctx.setup.facts.head, ctx.now());
    this.bus = laneBus(ctx.bus, this.tree.name);
    this.show('retrying', `on the new base ${ctx.setup.facts.head.slice(0, 12)}`);
    ctx.showBreaker(this.breaker, this.tree.name);
  }

  /** The task's ticks in this lane, until it landed, was discarded (best of N) or ended. */
  async run(): Promise<LaneEnd> {
    const result = await implementTask(this.ctx, this.task, this.breaker, this.shared.phase, this.target());
    return { result, lane: this };
  }

  private target(): TickTarget {
    const lane = this;
    const { ctx, budget, account, phase } = this.shared;
    return {
      get lane() {
        return lane.tree.name;
      },
      root: () => lane.tree.path,
      git: () => new Git(lane.tree.path, ctx.options.env),
      get bus() {
        return lane.bus;
      },
      brief: this.slot ? attemptBrief(this.slot) : null,
      checks: (signal) =>
        runProjectChecksIn(ctx, lane.tree.path, new Git(lane.tree.path, ctx.options.env), signal, lane.bus),
      beforeTick: (signal) => reserve(lane, signal),
      afterTick: (spent: TickSpend) => {
        lane.spent += spent.costUsd;
        budget.settle(lane.name, { usd: spent.costUsd, calls: spent.calls });
        lane.show('ticking', null);
      },
      waitOutLimit: async (_ctx, limit, breaker) => {
        await account.hold(lane.name, limit);
        await account.wait(lane.name, breaker, phase.signal, (waiting) => lane.showWait(waiting));
        return interruptionOf(ctx, breaker, phase);
      },
      beforeAgentCall: (breaker, signal) =>
        account.wait(lane.name, breaker, signal, (waiting) => lane.showWait(waiting)),
      land: (_task, _tickCommit, signal) => landLane(lane, signal),
    };
  }

  private showWait(waiting: boolean): void {
    this.show(waiting ? 'waiting' : 'ticking', waiting ? 'the usage limit of the shared account' : null);
  }
}

/** What an attempt's orchestrator is told: others try the same task; the smallest verified change wins. */
function attemptBrief(slot: AttemptSlot): string {
  const others = slot.group.of - 1;
  return `Best of ${slot.group.of}: this is attempt ${slot.index} of ${slot.group.of}. ${others} other builder(s) try the same task in their own worktrees; the runner lands the attempt it verifies with the smallest change, so change only what the task needs.`;
}

/** A tick's worst case in dollars and agent calls (seed 001 Q2), what a lane reserves before it. */
export function worstSpend(ctx: WorkflowContext): Spend {
  const worst = worstCaseTick(ctx.setup.config);
  return { usd: worst.estimated_cost_usd, calls: worst.orchestrator_calls + worst.builder_calls };
}

/** The lane's share of the one budget: the tick's worst case held until its real cost is known. */
async function reserve(lane: Lane, signal: AbortSignal): Promise<PhaseResult | null> {
  const { ctx, budget, phase } = lane.shared;
  const worst = worstSpend(ctx);
  while (!budget.tryReserve(lane.name, worst)) {
    if (signal.aborted) return interruptionOf(ctx, null, phase) ?? stopped(ctx);
    // Paused while waiting for another lane's budget: no tick starts (nothing is reserved yet).
    if (pauseRequested(ctx)) return { kind: 'stopped' };
    const exhausted = budget.hopeless(worst);
    if (exhausted) return { kind: 'fail', reason: exhausted.reason, detail: exhausted.detail };
    const held = budget.reserved;
    lane.bus.emit({
      type: 'log',
      level: 'info',
      message: `lane ${lane.name} waits for budget: $${held.usd.toFixed(2)} is reserved by other lanes (${held.calls} agent call(s))`,
    });
    await budget.nextSettle(signal);
  }
  return null;
}
