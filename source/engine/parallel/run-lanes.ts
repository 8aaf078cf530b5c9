import type { EngineBus } from '../events.js';
import type { TaskRecord } from '../protocol/workflow.js';
import type { PhaseResult, WorkflowContext } from '../workflow/context.js';
import { interruptionOf, pauseRequested } from '../workflow/interruption.js';
import { attemptsFor, type LanesWanted } from '../workflow/lanes-options.js';
import { phaseSignal, readTasksFile } from '../workflow/phase-helpers.js';
import { runProjectChecksIn } from '../workflow/project-checks.js';
import { AccountPause } from './account-pause.js';
import { runBestOf } from './best-of.js';
import { Lane, type LanesShared } from './lane.js';
import { endLane, failedLane } from './lane-end.js';
import { MergeQueue, type MergeStep } from './merge-queue.js';
import { recoverOrphanLanes } from './orphans.js';
import { type BudgetLimit, BudgetReservations } from './reservations.js';
import { type SchedulableTask, schedule } from './scheduler.js';
import { WorktreeManager } from './worktrees.js';

/**
 * IMPLEMENTATION in lanes (issue 19: `--parallel N`, `--attempts K`, or a risky task under
 * `workflow.best_of`): TASKS.md tasks whose dependencies are done and whose scopes do not overlap
 * run at once, each in its own runner-owned worktree (lane.ts), each tick the same judged tick as
 * with one lane. A task with K attempts runs K lanes side by side and lands the runner's pick
 * (best-of.ts). A verified task lands through the merge queue; a failed one leaves its worktree
 * kept. One failure stops new lanes from starting; the running ones finish their task (nothing is
 * cut short), then the phase ends with the first failure.
 */
export async function implementInLanes(ctx: WorkflowContext, wanted: LanesWanted): Promise<PhaseResult> {
  const phase = phaseSignal(ctx, ctx.setup.config.workflow.timeouts.implementation);
  const worktrees = new WorktreeManager(ctx.setup.paths, ctx.options.env);
  const queue: MergeQueue = new MergeQueue({
    integration: ctx.setup.git,
    env: ctx.options.env,
    checks: (tree, git, signal) => runProjectChecksIn(ctx, tree.path, git, signal, ctx.busFor(tree.name)),
    onStep: (lane, step, detail) => announceMerge(ctx.bus, lane, step, detail, queue),
  });
  const shared: LanesShared = {
    ctx,
    phase,
    worktrees,
    queue,
    budget: new BudgetReservations(budgetLimits(ctx)),
    account: new AccountPause(ctx),
  };
  try {
    await recoverOrphanLanes(ctx, worktrees);
    // The breakers of an earlier IMPLEMENTATION's lanes are history: this run's lanes start fresh.
    await ctx.update({ lane_breakers: {} });
    const failure = await scheduleLanes(shared, wanted, await planOf(ctx));
    if (failure) return failure;
    const interrupted = interruptionOf(ctx, null, phase);
    if (interrupted) return interrupted;
    // Paused after the running lanes landed their tasks: the rest waits for the resume.
    if (pauseRequested(ctx) && ctx.workflow.tasks.some((t) => t.status !== 'completed'))
      return { kind: 'stopped' };
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

type Plan = Map<number, { dependsOn: number[]; scope: string[] | null; risky: boolean }>;

/** Starts tasks as lanes free up, until every task ran or one failed; the first failure, or null. */
async function scheduleLanes(
  shared: LanesShared,
  wanted: LanesWanted,
  plan: Plan,
): Promise<PhaseResult | null> {
  const { ctx, phase } = shared;
  const running = new Map<number, Promise<{ number: number; result: PhaseResult | null }>>();
  let failure: PhaseResult | null = null;
  const told = new Map<number, string>();
  for (;;) {
    // After a failure, an interrupt or the pause key no task starts; the running ones end first.
    if (failure === null && !phase.signal.aborted && !pauseRequested(ctx)) {
      const next = schedule(schedulable(ctx.workflow.tasks, plan), [...running.keys()], wanted.lanes);
      for (const number of next.start) {
        const task = ctx.workflow.tasks.find((t) => t.number === number) as TaskRecord;
        const planned = plan.get(number);
        const attempts = attemptsFor(wanted, planned?.risky ?? false);
        running.set(number, runTask(shared, task, planned?.scope ?? null, attempts));
      }
      // A task not started yet is in no lane: its line names the task.
      for (const [number, why] of next.waiting)
        if (told.get(number) !== why && running.size > 0) {
          told.set(number, why);
          ctx.bus.emit({ type: 'log', level: 'info', message: `task ${number} waits: ${why}` });
        }
      await ctx.update({ current_task: runningLine(ctx, [...running.keys()]) });
    }
    if (running.size === 0) return failure;
    const ended = await Promise.race(running.values());
    running.delete(ended.number);
    if (ended.result && failure === null) failure = ended.result;
  }
}

/** One task: a lane, or K lanes for best of K; never throws (a lane that throws is a failure). */
async function runTask(
  shared: LanesShared,
  task: TaskRecord,
  scope: readonly string[] | null,
  attempts: number,
): Promise<{ number: number; result: PhaseResult | null }> {
  const number = task.number;
  try {
    if (attempts > 1) return { number, result: await runBestOf(shared, task, scope, attempts) };
    const lane = await Lane.open(shared, task, scope, null);
    const end = await lane.run();
    await endLane(shared, end);
    const result = end.result;
    return { number, result: result?.kind === 'discarded' ? null : result };
  } catch (error) {
    return { number, result: failedLane(task, error as Error) };
  }
}

/**
 * Every cap the lanes reserve against (issue 18's per-phase caps included): the workflow's spend,
 * and the IMPLEMENTATION phase's own spend and agent calls.
 */
function budgetLimits(ctx: WorkflowContext): BudgetLimit[] {
  const limits: BudgetLimit[] = [];
  const cap = ctx.workflow.max_cost_usd;
  if (cap !== null)
    limits.push({
      setting: 'workflow.max_cost_usd',
      reason: 'budget_exhausted',
      unit: 'usd',
      cap,
      spent: ctx.workflow.cost_usd,
    });
  const phase = ctx.workflow.phases.IMPLEMENTATION;
  const key = 'workflow.phases.implementation';
  if (phase?.max_cost_usd != null)
    limits.push({
      setting: `${key}.max_cost_usd`,
      reason: 'phase_budget_exhausted',
      unit: 'usd',
      cap: phase.max_cost_usd,
      spent: phase.cost_usd,
    });
  if (phase?.max_calls != null)
    limits.push({
      setting: `${key}.max_calls`,
      reason: 'phase_budget_exhausted',
      unit: 'calls',
      cap: phase.max_calls,
      spent: phase.calls,
    });
  return limits;
}

async function planOf(ctx: WorkflowContext): Promise<Plan> {
  const parsed = await readTasksFile(ctx);
  const plan: Plan = new Map();
  if (parsed.ok)
    for (const t of parsed.tasks)
      plan.set(t.number, { dependsOn: t.dependsOn, scope: t.scope, risky: t.risky });
  return plan;
}

function schedulable(tasks: readonly TaskRecord[], plan: Plan): SchedulableTask[] {
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
