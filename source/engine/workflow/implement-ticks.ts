import type { AgentRunner } from '../agents/agent-run.js';
import type { UsageLimit } from '../agents/claude-code/usage-limit.js';
import { MAX_LIMIT_WAITS, waitForReset } from '../agents/limit-wait.js';
import { supervisedRunner } from '../agents/supervised-runner.js';
import { recoverOrphanLanes } from '../parallel/orphans.js';
import { WorktreeManager } from '../parallel/worktrees.js';
import { remediationOf } from '../protocol/codes.js';
import type { TaskRecord } from '../protocol/workflow.js';
import type { CircuitBreaker } from '../supervise/circuit-breaker.js';
import { runTick, type TickResult } from '../tick/run-tick.js';
import { oneLine } from '../workspace/printable.js';
import { type CallBudget, callBudget } from './call-budget.js';
import type { PhaseResult, WorkflowContext } from './context.js';
import { earlierWorkOn } from './earlier-work.js';
import { evidenceWatcher } from './evidence.js';
import { interruptionOf, pauseRequested } from './interruption.js';
import { workflowRunnerWrites } from './judged-run.js';
import {
  answerQuestion,
  askGate,
  type PhaseSignal,
  phaseSignal,
  readTasksFile,
  stopped,
} from './phase-helpers.js';
import { PlanMemory } from './plan-memory.js';
import { describeRuns } from './project-checks.js';
import {
  alreadyDoneClaim,
  creditFor,
  filesOutsideFence,
  type NotAccepted,
  type TaskPaths,
} from './task-credit.js';
import { readTick, type TickReading } from './tick-reading.js';
import { laneOf, mainTarget, type TaskEnd, type TickTarget } from './tick-target.js';

/**
 * IMPLEMENTATION with the `ticks` engine (docs/ARCHITECTURE.md, the default): a judged Relais loop over the
 * pending tasks of TASKS.md. For each task the orchestrator proposes ticks aimed at it; a task is
 * completed only by a tick for it that was judged in scope, verified by the runner and committed,
 * with no write refused, touching the task's own paths (task-credit.ts). A stopped tick is rolled
 * back, a tick that is not accepted completes nothing, and the next one is told why, up to
 * `max_ticks_per_task`. Every agent of every tick runs under the phase's circuit breaker.
 */
export async function implementWithTicks(ctx: WorkflowContext): Promise<PhaseResult> {
  // Lanes a killed parallel run left behind are recovered at one lane too (issue 19).
  await recoverOrphanLanes(ctx, new WorktreeManager(ctx.setup.paths, ctx.options.env));
  const breaker = ctx.breakerFor('IMPLEMENTATION');
  ctx.showBreaker(breaker);
  const phase = phaseSignal(ctx, ctx.setup.config.workflow.timeouts.implementation);
  try {
    for (const task of ctx.workflow.tasks) {
      if (task.status === 'completed') continue;
      const ended = await implementTask(ctx, task, breaker, phase);
      // Only a best-of attempt is ever discarded, and the main tree runs none.
      if (ended)
        return ended.kind === 'discarded'
          ? { kind: 'fail', reason: 'tick_stopped', detail: ended.why }
          : ended;
    }
    await ctx.update({ current_task: null });
    return { kind: 'next', event: 'exit_signal' };
  } finally {
    phase.dispose();
  }
}

/**
 * One task's judged ticks until it is verified and landed, or ends the phase. `target` is the main
 * worktree, or a parallel lane (engine/parallel/run-lanes.ts): the same ticks, judged the same way.
 */
export async function implementTask(
  ctx: WorkflowContext,
  task: TaskRecord,
  breaker: CircuitBreaker | null,
  phase: PhaseSignal,
  target: TickTarget = mainTarget(ctx),
): Promise<TaskEnd | null> {
  const maxTicks = ctx.setup.config.workflow.max_ticks_per_task;
  if (target.lane === null) await ctx.update({ current_task: `${task.number}. ${task.title}` });
  await ctx.updateTask(task.number, { status: 'in_progress' }, target.lane);
  let note: string | null = ctx.workflow.pending_answer
    ? `The human answered an earlier question: ${ctx.workflow.pending_answer}`
    : null;
  let ticks = 0;
  // Plans that failed before a resume still count (issue 15): they are in the task's record.
  const plans = new PlanMemory(task.failed_plans, (failed_plans) =>
    ctx.updateTask(task.number, { failed_plans }, target.lane),
  );
  // A limit that never lifts is a failure after all: then the tick counts like any stopped one.
  let limitWaits = 0;
  const paths = await taskPathsOf(ctx, task.number);
  const fenced = outsideFence(ctx, task, paths);
  if (fenced) return fenced;
  while (ticks < maxTicks) {
    const ran = await budgetedTick(ctx, target, task, note, { breaker, phase, plans });
    if (ran.kind === 'end') return ran.result;
    const { tick, limit } = ran;
    const reading = readTick(tick, limit, limitWaits < MAX_LIMIT_WAITS);
    if (reading.kind === 'limit') {
      limitWaits++;
      // Not a failed attempt: wait for the reset, then the same task again.
      const afterWait = await waitOutLimitAt(ctx, target, reading.limit, breaker, phase);
      if (afterWait) return afterWait;
      continue;
    }
    if (reading.kind === 'question') {
      const asked = await agentQuestion(ctx, target, task, reading, breaker);
      if (asked.kind === 'end') return asked.result;
      note = asked.note;
      continue;
    }
    ticks++;
    // Counted on the record as it is now: best-of attempts at the same task add up (issue 19).
    await ctx.updateTask(task.number, (now) => ({ ticks: now.ticks + 1 }), target.lane);
    const next = await judgeTick(ctx, target, { task, paths }, tick, plans, breaker, phase);
    if (next.kind === 'done') return null;
    if (next.kind === 'end') return next.result;
    note = next.note;
  }
  const last = ctx.workflow.tasks.find((t) => t.number === task.number);
  const why =
    last?.verdict === 'rejected' && last.verified ? `; the last: not accepted: ${last.verified}` : '';
  return {
    kind: 'fail',
    reason: 'tick_stopped',
    detail:
      `task ${task.number} "${task.title}": no verified change of its own after ${maxTicks} tick(s) (workflow.max_ticks_per_task)${why}`.slice(
        0,
        2000,
      ),
  };
}

/**
 * A task whose Files the config's fence excludes cannot be done by any step: said before a tick
 * is paid for, with the fix (defect 3: package.json under the src/** and test/** fence).
 */
function outsideFence(ctx: WorkflowContext, task: TaskRecord, paths: TaskPaths | null): TaskEnd | null {
  const fence = ctx.setup.config.scope.default_allowed_globs;
  const outside = filesOutsideFence(paths, fence);
  if (outside.length === 0) return null;
  return {
    kind: 'fail',
    reason: 'scope_outside_config',
    detail:
      `task ${task.number} "${task.title}" names ${outside.join(', ')}, outside scope.default_allowed_globs (${fence.join(', ')}) in relais.config.json: no step could write ${outside.length === 1 ? 'it' : 'them'}. Widen the fence to ${outside.join(', ')}, commit the config, then ralphy start resumes.`.slice(
        0,
        2000,
      ),
  };
}

/** What TASKS.md names for the task (its Files and Scope), or null when it cannot be read. */
async function taskPathsOf(ctx: WorkflowContext, number: number): Promise<TaskPaths | null> {
  const parsed = await readTasksFile(ctx);
  const plan = parsed.ok ? parsed.tasks.find((t) => t.number === number) : undefined;
  return plan ? { files: plan.files, scope: plan.scope } : null;
}

/** The task a tick is aimed at, with the paths TASKS.md names for it. */
interface AimedAt {
  readonly task: TaskRecord;
  readonly paths: TaskPaths | null;
}

/**
 * One tick, unless the task ends before it (the pause key, a cap reached, a lane refused) or it
 * ended the phase (a call the caps refused, the breaker, a timeout, an interrupt). Checked before
 * the tick starts and before each of its agent calls (issue 18): a tick never crosses a cap.
 */
async function budgetedTick(
  ctx: WorkflowContext,
  target: TickTarget,
  task: TaskRecord,
  note: string | null,
  watch: Omit<TickWatch, 'budget'>,
): Promise<
  { kind: 'tick'; tick: TickResult; limit: UsageLimit | null } | { kind: 'end'; result: PhaseResult }
> {
  const end = (result: PhaseResult) => ({ kind: 'end' as const, result });
  if (pauseRequested(ctx)) return end({ kind: 'stopped' });
  const over = ctx.overBudget();
  if (over) return end({ kind: 'fail', ...over });
  const refusedLane = await target.beforeTick?.(watch.phase.signal);
  if (refusedLane) return end(refusedLane);
  let limit: UsageLimit | null = null;
  const budget = callBudget(ctx, target.lane);
  const tick = await runTaskTick(ctx, target, task, note, { ...watch, budget }, (found) => {
    limit = found;
  });
  target.afterTick?.(tick.spent);
  await budget.settle(tick);
  await ctx.refreshFacts();
  // A call the caps refused ended the tick: the phase stops here.
  const refused = budget.refused();
  if (refused) return end({ kind: 'fail', ...refused });
  const interrupted = interruptionOf(ctx, watch.breaker, watch.phase);
  if (interrupted) return end(interrupted);
  return { kind: 'tick', tick, limit };
}

/** What watches a tick's agents: the phase's breaker and signal, the failed plans, the caps. */
interface TickWatch {
  readonly breaker: CircuitBreaker | null;
  readonly phase: PhaseSignal;
  readonly plans: PlanMemory;
  readonly budget: CallBudget;
}

/**
 * One tick aimed at `task`, every agent under the phase's breaker and checked against the caps
 * before it starts, limits reported to `onLimit`.
 */
function runTaskTick(
  ctx: WorkflowContext,
  target: TickTarget,
  task: TaskRecord,
  note: string | null,
  { breaker, phase, plans, budget }: TickWatch,
  onLimit: (limit: UsageLimit) => void,
): Promise<TickResult> {
  // A tick a usage limit ended is given back to the tick budget too (issue 15), not only here.
  let limited = false;
  return taskGoal(ctx, task, [target.brief, note]).then((goal) =>
    runTick({
      endedByLimit: () => limited,
      root: target.root(),
      bus: target.bus,
      signal: phase.signal,
      env: ctx.options.env,
      command: 'tick',
      now: ctx.options.now,
      lockHeld: true,
      runnerWrites: workflowRunnerWrites(ctx.setup.paths),
      goal,
      refusePlan: plans.refuse,
      agentRunner: () =>
        heldBy(
          target,
          breaker,
          budget.wrap(
            supervisedRunner(ctx.runner, {
              breaker,
              clock: ctx.options.clock,
              onBreaker: ctx.breakerReporter(breaker, target.lane),
              watch: evidenceWatcher(ctx, breaker, undefined, { root: target.root(), git: target.git() }),
              onLimit: (found) => {
                limited = true;
                onLimit(found);
              },
            }),
          ),
        ),
    }),
  );
}

/** Each agent call first waits for what holds the target (parallel lanes: a shared usage limit). */
function heldBy(target: TickTarget, breaker: CircuitBreaker | null, runner: AgentRunner): AgentRunner {
  const wait = target.beforeAgentCall;
  if (!wait) return runner;
  return {
    run: async (request, bus) => {
      await wait(breaker, request.signal);
      return runner.run(request, bus);
    },
  };
}

/** A counted tick: over budget, blocked, stopped (re-plan), or a success to check against evidence. */
async function judgeTick(
  ctx: WorkflowContext,
  target: TickTarget,
  aimed: AimedAt,
  tick: TickResult,
  plans: PlanMemory,
  breaker: CircuitBreaker | null,
  phase: PhaseSignal,
): Promise<AfterSuccess> {
  const { task } = aimed;
  if (tick.verdict === 'blocked' || tick.verdict === 'stop') await showStopped(ctx, target, task, tick);
  if (tick.verdict === 'blocked')
    return {
      kind: 'end',
      result: {
        kind: 'fail',
        reason: 'tick_stopped',
        detail: `task ${task.number}: the tick was blocked (${tick.code}: ${tick.detail ?? ''}). ${remediationOf(tick.code)}`,
      },
    };
  if (tick.verdict === 'stop') return afterStop(ctx, target, task, tick, plans, breaker);
  return afterSuccess(ctx, target, aimed, tick, { plans, breaker, phase });
}

/**
 * A stopped tick: its plan may not be tried again, and the orchestrator is told to re-plan. A
 * plan the runner refused as a repeat is escalated to the human (issue 15: re-planning with a
 * task fingerprint before escalating); unanswered, the task fails.
 */
async function afterStop(
  ctx: WorkflowContext,
  target: TickTarget,
  task: TaskRecord,
  tick: TickResult,
  plans: PlanMemory,
  breaker: CircuitBreaker | null,
): Promise<{ kind: 'again'; note: string } | { kind: 'end'; result: PhaseResult }> {
  if (tick.code !== 'STOP_PLAN_REPEATED') {
    await plans.recordStop(tick.code);
    return {
      kind: 'again',
      note: `The previous tick for this task was stopped and rolled back: ${tick.code} (${tick.detail ?? ''}). ${remediationOf(tick.code)}${plans.replanNote()}`,
    };
  }
  const question = `Task ${task.number} "${task.title}": ${tick.detail ?? 'the same failed plan again'}. How should it be done differently?`;
  const step = { kind: 'question' as const, question, denied: [] as string[], costUsd: 0 };
  const answer = await answerQuestion(ctx, 'orchestrator', step, breaker, laneOf(target, task));
  if (answer !== null) return { kind: 'again', note: `${answer}${plans.replanNote()}` };
  return {
    kind: 'end',
    result: {
      kind: 'fail',
      reason: 'tick_stopped',
      detail: `task ${task.number}: ${tick.detail ?? 'the same failed plan again'}. ${remediationOf('STOP_PLAN_REPEATED')}`,
    },
  };
}

/** The target's own wait (parallel lanes wait together), else the workflow's. */
function waitOutLimitAt(
  ctx: WorkflowContext,
  target: TickTarget,
  limit: UsageLimit,
  breaker: CircuitBreaker | null,
  phase: PhaseSignal,
): Promise<PhaseResult | null> {
  return target.waitOutLimit
    ? target.waitOutLimit(ctx, limit, breaker, phase)
    : waitOutLimit(ctx, limit, breaker, phase);
}

/** A usage limit: the countdown, the breaker paused, then whatever interrupted the wait (or null). */
async function waitOutLimit(
  ctx: WorkflowContext,
  limit: UsageLimit,
  breaker: CircuitBreaker | null,
  phase: PhaseSignal,
): Promise<PhaseResult | null> {
  await waitForReset({
    limit,
    bus: ctx.bus,
    clock: ctx.options.clock,
    breaker,
    signal: phase.signal,
    onWaiting: (until) => ctx.waiting(until),
  });
  return interruptionOf(ctx, breaker, phase);
}

/**
 * Issue 15: a builder that answers with a question instead of its result JSON (or an orchestrator
 * that asks instead of proposing a task) needs the human, like the agents of the other engines:
 * the question gate, not a retry counted against max_ticks_per_task.
 */
async function agentQuestion(
  ctx: WorkflowContext,
  target: TickTarget,
  task: TaskRecord,
  asked: Extract<TickReading, { kind: 'question' }>,
  breaker: CircuitBreaker | null,
): Promise<{ kind: 'answered'; note: string } | { kind: 'end'; result: PhaseResult }> {
  const step = { kind: 'question' as const, question: asked.question, denied: [] as string[], costUsd: 0 };
  const note = await answerQuestion(ctx, asked.from, step, breaker, laneOf(target, task));
  if (note !== null) return { kind: 'answered', note };
  return {
    kind: 'end',
    result: {
      kind: 'fail',
      reason: 'needs_input',
      detail: `task ${task.number}: the ${asked.from} asked a question nobody answered: ${oneLine(asked.question, 300)}`,
    },
  };
}

type AfterSuccess = { kind: 'done' } | { kind: 'again'; note: string } | { kind: 'end'; result: TaskEnd };

/** What a successful tick's reading needs beyond the tick: the failed plans, the breaker, the phase. */
interface SuccessWatch {
  readonly plans: PlanMemory;
  readonly breaker: CircuitBreaker | null;
  readonly phase: PhaseSignal;
}

async function afterSuccess(
  ctx: WorkflowContext,
  target: TickTarget,
  aimed: AimedAt,
  tick: TickResult,
  watch: SuccessWatch,
): Promise<AfterSuccess> {
  const { task, paths } = aimed;
  const { breaker, phase } = watch;
  const report = tick.report;
  if (tick.control?.action === 'stop') return afterAlreadyDone(ctx, target, aimed, tick, watch);
  if (report?.task?.task_kind === 'question') return afterQuestion(ctx, target, task, report.task, breaker);
  // Evidence, not a claim (task-credit.ts): a change of the task's own, none of its writes refused.
  const commit = report?.commit ?? null;
  const credit = creditFor(task.number, paths, {
    commit,
    touched: report?.scope.touched_paths ?? [],
    refused: tick.refusedWrites,
  });
  if (!credit.accepted) return notAccepted(ctx, target, task, tick, credit, watch.plans);
  // A tick that ran no verification gets the project's own checks.
  let runs = report?.verification.runs ?? [];
  if (runs.length === 0) {
    const checks = await target.checks(phase.signal);
    if (checks.aborted) return { kind: 'end', result: interruptionOf(ctx, breaker, phase) ?? stopped(ctx) };
    if (checks.problem)
      return {
        kind: 'again',
        note: `The last tick requested no verification, and the runner's checks fail: ${checks.problem}. Propose a task that makes them pass, with the verification templates that prove it.`,
      };
    runs = checks.runs;
  }
  return completeTask(ctx, target, breaker, task, report?.agents.builder.summary ?? null, commit, phase, [
    `${tick.code}${commit ? `, committed ${commit.slice(0, 12)}` : ''}`,
    `judged ${report?.blast_radius_line ?? ''}`,
    runs.length > 0 ? `verification: ${describeRuns(runs)}` : 'no verification configured',
  ]);
}

/**
 * The orchestrator says the task needs no change: completed only when a commit on the branch that
 * no task was credited with changed the task's paths and the project's checks pass on the tree
 * (earlier-work.ts); otherwise it completes nothing, like any step that changed nothing.
 */
async function afterAlreadyDone(
  ctx: WorkflowContext,
  target: TickTarget,
  aimed: { task: TaskRecord; paths: TaskPaths | null },
  tick: TickResult,
  watch: SuccessWatch,
): Promise<AfterSuccess> {
  const { task, paths } = aimed;
  const reason = tick.control?.reason ?? '';
  const credited = new Set(ctx.workflow.tasks.flatMap((t) => t.commits));
  const earlier = await earlierWorkOn(target, ctx.workflow.base_commit, paths, credited);
  if (earlier.length === 0)
    return notAccepted(ctx, target, task, tick, alreadyDoneClaim(task.number, paths, reason), watch.plans);
  const checks = await target.checks(watch.phase.signal);
  if (checks.aborted)
    return { kind: 'end', result: interruptionOf(ctx, watch.breaker, watch.phase) ?? stopped(ctx) };
  if (checks.problem)
    return {
      kind: 'again',
      note: `You said task ${task.number} is already done, and the branch does change its paths, but the runner's checks fail: ${checks.problem}. Propose an execute task that makes them pass.`,
    };
  return completeTask(
    ctx,
    target,
    watch.breaker,
    task,
    `already done: ${reason}`.slice(0, 500),
    null,
    watch.phase,
    [
      `already on the branch: ${earlier.slice(0, 5).join(', ')} changed by a commit no task was credited with`,
      checks.runs.length > 0 ? `verification: ${describeRuns(checks.runs)}` : 'no verification configured',
    ],
  );
}

/**
 * A successful tick that completes nothing: the task's row says why ("not accepted: no change"),
 * next to what the builder claimed, the plan may not be tried again for this task, and the
 * orchestrator is told. Whatever the tick committed stays on the branch: it was judged and verified.
 */
async function notAccepted(
  ctx: WorkflowContext,
  target: TickTarget,
  task: TaskRecord,
  tick: TickResult,
  credit: NotAccepted,
  plans: PlanMemory,
): Promise<AfterSuccess> {
  const report = tick.report;
  const runs = report?.verification.runs ?? [];
  const evidence = [
    `${tick.code}${report?.commit ? `, committed ${report.commit.slice(0, 12)}` : ''}`,
    ...(report ? [`judged ${report.blast_radius_line}`] : []),
    ...(runs.length > 0 ? [`verification: ${describeRuns(runs)}`] : []),
  ];
  await ctx.updateTask(
    task.number,
    {
      claimed:
        (tick.control?.action === 'stop'
          ? `the orchestrator said it was already done: ${tick.control.reason ?? ''}`
          : report?.agents.builder.summary
        )?.slice(0, 500) ?? null,
      verified: `${credit.why} (${evidence.join('; ')})`.slice(0, 500),
      verdict: 'rejected',
    },
    target.lane,
  );
  // Only an execute plan of this tick is one to refuse again (a control stop has no plan).
  if (report?.task?.task_kind === 'execute' && tick.control === null)
    await plans.recordStop(`not accepted: ${credit.why}`.slice(0, 80));
  return { kind: 'again', note: `${credit.note}${plans.replanNote()}` };
}

/** A question task: the human answers through the gate port, and the answer goes into the next tick. */
async function afterQuestion(
  ctx: WorkflowContext,
  target: TickTarget,
  task: TaskRecord,
  asked: NonNullable<NonNullable<TickResult['report']>['task']>,
  breaker: CircuitBreaker | null,
): Promise<AfterSuccess> {
  const question = asked.question;
  const lines = [question?.prompt ?? asked.intent, ...(question?.choices ?? []).map((c) => `  - ${c}`)];
  const reply = await askGate(
    ctx,
    'input',
    `The orchestrator asks about task ${task.number}${target.lane ? ` (lane ${target.lane})` : ''}`,
    lines,
    'text',
    breaker,
    [],
    target.lane,
  );
  if (ctx.options.signal.aborted) return { kind: 'end', result: stopped(ctx) };
  if (reply.decision !== 'answer' || !reply.text)
    return {
      kind: 'end',
      result: {
        kind: 'fail',
        reason: 'needs_input',
        detail: `task ${task.number}: a question nobody answered: ${lines[0]}`,
      },
    };
  await ctx.update({ pending_answer: reply.text });
  return { kind: 'again', note: `You asked: ${lines[0]}\nThe human answered: ${reply.text}` };
}

async function completeTask(
  ctx: WorkflowContext,
  target: TickTarget,
  breaker: CircuitBreaker | null,
  task: TaskRecord,
  claimed: string | null,
  /** The tick's own commit, when it changed something. */
  tickCommit: string | null,
  phase: PhaseSignal,
  verified: string[],
): Promise<AfterSuccess> {
  // A lane's verified work lands through the merge queue first (issue 19); the main tree's is there.
  const landing = await target.land(task, tickCommit, phase.signal);
  if (landing.kind !== 'landed')
    return landing.kind === 'discarded' ? { kind: 'end', result: landing } : landing;
  const record = ctx.workflow.tasks.find((t) => t.number === task.number);
  const added = landing.commits;
  await ctx.updateTask(
    task.number,
    {
      status: 'completed',
      claimed: claimed?.slice(0, 500) ?? null,
      verified: verified.join('; ').slice(0, 500),
      verdict: 'verified',
      commits: [...new Set([...(record?.commits ?? []), ...added])].slice(-100),
    },
    target.lane,
  );
  await ctx.update({ pending_answer: null });
  // Seed 002 §6.1 stagnation counts tasks that reach `completed`.
  breaker?.onTaskCompleted();
  return { kind: 'done' };
}

/**
 * A stopped or blocked tick leaves its task pending, but the task row shows what the builder
 * claimed next to why the runner did not believe it (the stop code, a failed verification).
 */
async function showStopped(
  ctx: WorkflowContext,
  target: TickTarget,
  task: TaskRecord,
  tick: TickResult,
): Promise<void> {
  const report = tick.report;
  const runs = report?.verification.runs ?? [];
  const verified = [
    `${tick.code}${tick.detail ? `: ${oneLine(tick.detail, 300)}` : ''}`,
    ...(runs.length > 0 ? [`verification: ${describeRuns(runs)}`] : []),
  ];
  await ctx.updateTask(
    task.number,
    {
      claimed: report?.agents.builder.summary?.slice(0, 500) ?? null,
      verified: verified.join('; ').slice(0, 500),
      verdict: 'rejected',
    },
    target.lane,
  );
}

/** The orchestrator's goal for this tick: the one task, with what the target adds and the last tick taught. */
async function taskGoal(
  ctx: WorkflowContext,
  task: TaskRecord,
  notes: ReadonlyArray<string | null | undefined>,
): Promise<string> {
  const parsed = await readTasksFile(ctx);
  const plan = parsed.ok ? parsed.tasks.find((t) => t.number === task.number) : undefined;
  return [
    `Ralphy workflow "${ctx.prd.title}": implement task ${task.number} of specs/TASKS.md, and only that task.`,
    `Task ${task.number}: ${task.title}`,
    ...(plan
      ? [`Description: ${plan.description || '(none)'}`, `Files: ${plan.files.join(', ') || '(not listed)'}`]
      : []),
    'The full specification is in specs/SPEC.md. Propose one small execute task for it, with the',
    'verification templates that prove it. When it is already done, return a control stop.',
    ...notes.flatMap((note) => (note ? ['', note] : [])),
  ].join('\n');
}
