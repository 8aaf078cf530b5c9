import micromatch from 'micromatch';
import type { EngineBus, LanePhase } from '../events.js';
import { laneBus } from '../events.js';
import { Git, splitNul } from '../judge/git.js';
import type { TaskRecord } from '../protocol/workflow.js';
import type { CircuitBreaker } from '../supervise/circuit-breaker.js';
import type { PhaseResult, WorkflowContext } from '../workflow/context.js';
import { implementTask } from '../workflow/implement-ticks.js';
import { interruptionOf } from '../workflow/interruption.js';
import { askGate, type PhaseSignal, phaseSignal, readTasksFile, stopped } from '../workflow/phase-helpers.js';
import { runProjectChecksIn } from '../workflow/project-checks.js';
import { commitTaskStatus } from '../workflow/task-status.js';
import type { Landing, TickTarget } from '../workflow/tick-target.js';
import { worstCaseTick } from '../workspace/ledger.js';
import { MergeQueue, type MergeStep } from './merge-queue.js';
import { recoverOrphanLanes } from './orphans.js';
import { BudgetReservations } from './reservations.js';
import { type SchedulableTask, schedule } from './scheduler.js';
import { type Worktree, WorktreeManager } from './worktrees.js';

/**
 * IMPLEMENTATION with `--parallel N` (issue 19): TASKS.md tasks whose dependencies are done and
 * whose scopes do not overlap run at once, each in its own runner-owned worktree, each tick the
 * same judged tick as with one lane (workflow/implement-ticks.ts `implementTask`, through a lane
 * target). A verified task lands through the merge queue; a failed one leaves its worktree kept.
 * One failure stops new lanes from starting; the running ones finish their task (nothing is cut
 * short), then the phase ends with the first failure.
 */
export async function implementInLanes(ctx: WorkflowContext, lanes: number): Promise<PhaseResult> {
  const phase = phaseSignal(ctx, ctx.setup.config.workflow.timeouts.implementation);
  const worktrees = new WorktreeManager(ctx.setup.paths, ctx.options.env);
  const budget = new BudgetReservations(ctx.workflow.max_cost_usd, ctx.workflow.cost_usd);
  const queue: MergeQueue = new MergeQueue({
    integration: ctx.setup.git,
    env: ctx.options.env,
    checks: (root, git, signal) => runProjectChecksIn(ctx, root, git, signal),
    onStep: (lane, step, detail) => announceMerge(ctx.bus, lane, step, detail, queue),
  });
  try {
    await recoverOrphanLanes(ctx, worktrees);
    const plan = await planOf(ctx);
    const running = new Map<number, Promise<{ number: number; result: PhaseResult | null }>>();
    let failure: PhaseResult | null = null;
    const told = new Map<number, string>();
    for (;;) {
      if (failure === null && !phase.signal.aborted) {
        const view = schedulable(ctx.workflow.tasks, plan);
        const next = schedule(view, [...running.keys()], lanes);
        for (const number of next.start) {
          const task = ctx.workflow.tasks.find((t) => t.number === number) as TaskRecord;
          const scope = plan.get(number)?.scope ?? null;
          const lane = { ctx, task, phase, worktrees, queue, budget, scope };
          running.set(
            number,
            runLane(lane).then(
              (result) => ({ number, result }),
              // A lane that throws (git refused a worktree, a full disk) ends as a failure with its reason.
              (error: Error) => ({
                number,
                result: {
                  kind: 'fail' as const,
                  reason: 'tick_stopped' as const,
                  detail: `the lane of task ${number} failed: ${error.message}`.slice(0, 2000),
                },
              }),
            ),
          );
        }
        for (const [number, why] of next.waiting)
          if (told.get(number) !== why && running.size > 0) {
            told.set(number, why);
            ctx.bus.emit({ type: 'log', level: 'info', message: `task ${number} waits: ${why}` });
          }
        await ctx.update({ current_task: runningLine(ctx, [...running.keys()]) });
      }
      if (running.size === 0) break;
      const ended = await Promise.race(running.values());
      running.delete(ended.number);
      if (ended.result && failure === null) failure = ended.result;
    }
    if (failure) return failure;
    const interrupted = interruptionOf(ctx, null, phase);
    if (interrupted) return interrupted;
    const left = ctx.workflow.tasks.filter((t) => t.status !== 'completed');
    if (left.length > 0)
      return {
        kind: 'fail',
        reason: 'tick_stopped',
        detail: `task(s) ${left.map((t) => t.number).join(', ')} could not be scheduled (their dependencies are not completed)`,
      };
    await ctx.update({ current_task: null });
    return { kind: 'next', event: 'exit_signal' };
  } finally {
    phase.dispose();
  }
}

interface LaneRun {
  readonly ctx: WorkflowContext;
  readonly task: TaskRecord;
  readonly phase: PhaseSignal;
  readonly worktrees: WorktreeManager;
  readonly queue: MergeQueue;
  readonly budget: BudgetReservations;
  /** The task's declared Scope (TASKS.md), null when it runs alone. */
  readonly scope: readonly string[] | null;
}

/** One task in its own worktree: judged ticks (the breaker is the lane's own), then the queue. */
async function runLane(run: LaneRun): Promise<PhaseResult | null> {
  const { ctx, task, worktrees } = run;
  let tree = await worktrees.create(task.number, ctx.setup.facts.head, ctx.now());
  let bus = laneBus(ctx.bus, tree.name);
  let spent = 0;
  const show = (phase: LanePhase, detail: string | null = null) =>
    ctx.bus.emit({
      type: 'lane.changed',
      lane: tree.name,
      task: task.number,
      title: task.title,
      phase,
      worktree: tree.path,
      detail,
      cost_usd: spent,
    });
  show('started', `from ${ctx.setup.facts.head.slice(0, 12)}`);
  // Seed 002 §6.1: the breaker supervises each agent process; each lane has its own.
  const breaker = ctx.breakerFor('IMPLEMENTATION');
  let mergeFailures = 0;
  const moveToFreshTree = async (why: string) => {
    await worktrees.keep(tree, task.number, why, ctx.now());
    show('kept', why);
    await ctx.refreshFacts();
    tree = await worktrees.create(task.number, ctx.setup.facts.head, ctx.now());
    bus = laneBus(ctx.bus, tree.name);
    show('retrying', `on the new base ${ctx.setup.facts.head.slice(0, 12)}`);
  };
  const target: TickTarget = {
    get lane() {
      return tree.name;
    },
    root: () => tree.path,
    git: () => new Git(tree.path, ctx.options.env),
    get bus() {
      return bus;
    },
    checks: (signal) => runProjectChecksIn(ctx, tree.path, new Git(tree.path, ctx.options.env), signal),
    beforeTick: (signal) => reserve(run, tree.name, signal),
    afterTick: (cost) => {
      spent += cost;
      run.budget.settle(tree.name, cost);
      show('ticking', null);
    },
    land: async (_task, _tickCommit, signal): Promise<Landing> => {
      // The lane's fence: only what the task declared may land beside the other lanes.
      const outside = await outsideScope(tree, run.scope, ctx.options.env);
      if (outside.length > 0) {
        const why = `task ${task.number} changed ${outside.slice(0, 10).join(', ')}, outside its declared Scope (${(run.scope ?? []).join(', ')})`;
        await moveToFreshTree(why);
        return {
          kind: 'again',
          note: `${why}. Other lanes work beside this one: change only paths within the task's Scope.`,
        };
      }
      show('merging', null);
      let statusCommit: string | null = null;
      const outcome = await run.queue.land(tree, signal, async () => {
        await ctx.refreshFacts();
        statusCommit = await commitTaskStatus(ctx, task.number, 'completed');
      });
      if (outcome.kind === 'aborted')
        return { kind: 'end', result: interruptionOf(ctx, breaker, run.phase) ?? stopped(ctx) };
      if (outcome.kind === 'landed') {
        show('landed', outcome.commit.slice(0, 12));
        await worktrees.remove(tree);
        return { kind: 'landed', commits: [outcome.commit, statusCommit].filter((c): c is string => !!c) };
      }
      mergeFailures++;
      const why = outcome.detail;
      if (mergeFailures === 1) {
        // Issue 19: a conflict or a post-merge failure re-runs the task once on the new base.
        await moveToFreshTree(why);
        return {
          kind: 'again',
          note: `Your verified change for task ${task.number} could not land on the integration branch: ${why}. Other tasks landed meanwhile; this tick starts again from the new base. Propose the task again so that it fits the code as it is now.`,
        };
      }
      return askAfterSecondFailure(
        run,
        tree,
        why,
        outcome.kind === 'conflict' ? outcome.files : [],
        breaker,
        async () => {
          mergeFailures = 1;
          await moveToFreshTree(why);
        },
      );
    },
  };
  const result = await implementTask(ctx, task, breaker, run.phase, target);
  if (result === null) return null;
  // A lane that did not land keeps its worktree for a human (issue 19), unless nothing happened in it.
  const detail = result.kind === 'fail' ? `${result.reason}: ${result.detail}` : result.kind;
  if (result.kind === 'fail') {
    await worktrees.keep(tree, task.number, detail, ctx.now());
    show('kept', detail);
  } else show('failed', detail);
  return result;
}

/** Paths the lane's branch changed that its declared scope does not cover (none when undeclared). */
async function outsideScope(
  tree: Worktree,
  scope: readonly string[] | null,
  env: NodeJS.ProcessEnv,
): Promise<string[]> {
  if (scope === null) return [];
  const git = new Git(tree.path, env);
  const changed = await git.run(['diff', '--name-only', '-z', '--no-renames', tree.base, 'HEAD']);
  return splitNul(changed.stdout).filter((path) => !micromatch.isMatch(path, [...scope], { dot: true }));
}

/** The second failed landing: a human sees the conflict and decides whether to try once more. */
async function askAfterSecondFailure(
  run: LaneRun,
  tree: Worktree,
  why: string,
  files: string[],
  breaker: CircuitBreaker | null,
  again: () => Promise<void>,
): Promise<Landing> {
  const { ctx, task } = run;
  const lines = [
    why,
    ...(files.length > 0 ? [`Conflicting files: ${files.join(', ')}`] : []),
    `The attempt is kept in ${tree.path} (branch ${tree.branch}).`,
    'Approve to run the task once more on the current integration branch; reject to stop the workflow.',
  ];
  const reply = await askGate(
    ctx,
    'input',
    `Task ${task.number} "${task.title}" could not land twice`,
    lines,
    'yes_no',
    breaker,
  );
  if (reply.decision === 'approve') {
    await again();
    return { kind: 'again', note: `The human asked for one more try after: ${why}.` };
  }
  await run.worktrees.keep(tree, task.number, why, ctx.now());
  return {
    kind: 'end',
    result: {
      kind: 'fail',
      reason: 'merge_failed',
      detail: `task ${task.number}: ${why} (kept in ${tree.path})`,
    },
  };
}

/** The lane's share of the one budget: the tick's worst case held until its real cost is known. */
async function reserve(run: LaneRun, lane: string, signal: AbortSignal): Promise<PhaseResult | null> {
  const worst = worstCaseTick(run.ctx.setup.config).estimated_cost_usd;
  while (!run.budget.tryReserve(lane, worst)) {
    if (run.budget.hopeless(worst) || signal.aborted)
      return signal.aborted
        ? (interruptionOf(run.ctx, null, run.phase) ?? stopped(run.ctx))
        : {
            kind: 'fail',
            reason: 'budget_exhausted',
            detail: `one more worst-case tick ($${worst.toFixed(2)}) does not fit beside the $${run.budget.total.toFixed(2)} spent under workflow.max_cost_usd`,
          };
    run.ctx.bus.emit({
      type: 'log',
      level: 'info',
      message: `lane ${lane} waits for budget: $${run.budget.reserved.toFixed(2)} is reserved by other lanes`,
    });
    await run.budget.nextSettle(signal);
  }
  return null;
}

async function planOf(
  ctx: WorkflowContext,
): Promise<Map<number, { dependsOn: number[]; scope: string[] | null }>> {
  const parsed = await readTasksFile(ctx);
  const plan = new Map<number, { dependsOn: number[]; scope: string[] | null }>();
  if (parsed.ok) for (const t of parsed.tasks) plan.set(t.number, { dependsOn: t.dependsOn, scope: t.scope });
  return plan;
}

function schedulable(
  tasks: readonly TaskRecord[],
  plan: Map<number, { dependsOn: number[]; scope: string[] | null }>,
): SchedulableTask[] {
  return tasks.map((t) => ({
    number: t.number,
    status: t.status,
    dependsOn: plan.get(t.number)?.dependsOn ?? [],
    // Not in TASKS.md any more (or unreadable): no declared scope, so the task runs alone.
    scope: plan.get(t.number)?.scope ?? null,
  }));
}

function runningLine(ctx: WorkflowContext, running: number[]): string | null {
  if (running.length === 0) return null;
  const titles = running.map((n) => `${n}. ${ctx.workflow.tasks.find((t) => t.number === n)?.title ?? ''}`);
  return `${running.length} lane(s): ${titles.join(' | ')}`.slice(0, 500);
}

function announceMerge(
  bus: EngineBus,
  lane: string,
  step: MergeStep,
  detail: string | null,
  queue: MergeQueue,
): void {
  bus.emit({ type: 'merge.changed', lane, step, detail, waiting: [...queue.waiting] });
}
