import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { AgentRunner } from '../agents/agent-run.js';
import type { UsageLimit } from '../agents/claude-code/usage-limit.js';
import { MAX_LIMIT_WAITS, waitForReset } from '../agents/limit-wait.js';
import { supervisedRunner } from '../agents/supervised-runner.js';
import type { PlannedTask } from '../cycle/blocks.js';
import type { CycleRunners } from '../cycle/context.js';
import { cycleRunners } from '../cycle/runners.js';
import { runCycleTrack } from '../cycle/track-runner.js';
import { splitCycleSection } from '../protocol/cycle-policy.js';
import { branchSlug } from '../session/prd.js';
import { breakerFrom } from '../supervise/breaker-settings.js';
import type { CircuitBreaker } from '../supervise/circuit-breaker.js';
import { isInsideDir } from '../workspace/safe-path.js';
import type { PhaseResult, WorkflowContext } from './context.js';
import { evidenceWatcher } from './evidence.js';
import { interruptionOf } from './interruption.js';
import { workflowRunnerWrites } from './judged-run.js';
import { phaseSignal, readTasksFile } from './phase-helpers.js';
import { prdObjective } from './pr-body.js';
import { commitTaskStatus } from './task-status.js';
import type { PlanTask } from './tasks-file.js';

/**
 * IMPLEMENTATION with the `cycle` engine (docs/ARCHITECTURE.md, seed 003): TASKS.md becomes one deadf track
 * and the cycle runs generate → implement → verify → reflect for each task, every step decided by
 * the runner's table and every task verified by the six deterministic checks plus one verifier
 * verdict per `LLM:` criterion. Every agent of the cycle runs under the phase's circuit breaker.
 * A cycle that needs a human pauses the workflow (FAILED, `cycle_stopped`, resumable).
 */
export async function implementWithCycle(ctx: WorkflowContext): Promise<PhaseResult> {
  const { config } = ctx.setup;
  const parsed = await readTasksFile(ctx);
  if (!parsed.ok) return { kind: 'fail', reason: 'invalid_output', detail: parsed.problems.join('; ') };
  // The cycle has its own stuck detection (stuck_count, re-plan, escalate), and TASKS.md does not
  // move while it works: no stagnation trigger here, the other triggers as everywhere.
  const breaker = breakerFrom(config, 'CYCLE', () => ctx.options.clock.now());
  ctx.showBreaker(breaker);
  const phase = phaseSignal(ctx, config.workflow.timeouts.implementation);
  // The spend caps stop the cycle between agent calls, never in the middle of one.
  const budget = new AbortController();
  let overBudget: ReturnType<WorkflowContext['overBudget']> = null;
  try {
    const { policy, agents } = splitCycleSection(config.cycle);
    const runners = counted(
      ctx,
      supervised(
        ctx,
        breaker,
        ctx.options.cycleRunners?.(ctx.setup) ??
          cycleRunners(
            agents,
            config,
            config.codex_cli,
            ctx.options.env,
            ctx.setup.facts.root,
            ctx.setup.sandbox,
          ),
      ),
      () => {
        overBudget = ctx.overBudget();
        if (overBudget) budget.abort();
        return overBudget !== null;
      },
    );
    const open = parsed.tasks.filter((t) => t.status !== 'completed');
    for (const task of open) await ctx.updateTask(task.number, { status: 'in_progress' });
    await ctx.update({ current_task: open.map((t) => `${t.number}. ${t.title}`).join(', ') || null });
    const run = await runCycleTrack(
      {
        root: ctx.setup.facts.root,
        config,
        policy,
        agents,
        runners,
        bus: ctx.bus,
        signal: AbortSignal.any([phase.signal, budget.signal]),
        env: ctx.options.env,
        gates: ctx.options.gates,
        now: ctx.options.now,
        runnerWrites: workflowRunnerWrites(ctx.setup.paths),
      },
      {
        id: `ralphy-${branchSlug(ctx.prd.title)}`,
        name: ctx.prd.title,
        goal: prdObjective(ctx.prd.text) || ctx.prd.title,
        tasks: open.map((t) => plannedTask(ctx, t)),
      },
    );
    await ctx.refreshFacts();
    const stoppedBy = overBudget as ReturnType<WorkflowContext['overBudget']>;
    if (stoppedBy) return { kind: 'fail', ...stoppedBy };
    const interrupted = interruptionOf(ctx, breaker, phase);
    if (interrupted) return interrupted;
    if (!run.ok) return { kind: 'fail', reason: 'cycle_stopped', detail: run.detail };
    if (!run.completed)
      return {
        kind: 'fail',
        reason: 'cycle_stopped',
        detail:
          `the cycle stopped (${run.end})${run.last ? `: ${run.last.code ?? run.last.reply} ${run.last.details}` : ''}`.slice(
            0,
            1500,
          ),
      };
    for (const task of open) {
      const statusCommit = await commitTaskStatus(ctx, task.number, 'completed');
      await ctx.updateTask(task.number, {
        status: 'completed',
        claimed: 'the implementer committed it',
        verified: 'cycle verify: the six deterministic checks and every LLM criterion passed',
        verdict: 'verified',
        commits: statusCommit ? [statusCommit] : [],
      });
    }
    await ctx.update({ current_task: null });
    return { kind: 'next', event: 'exit_signal' };
  } finally {
    phase.dispose();
  }
}

/**
 * Every agent call of the cycle counted where the workflow counts spend (one call and what it
 * cost, per phase), and none started once a cap is reached (`over` aborts the cycle then).
 */
function counted(ctx: WorkflowContext, runners: CycleRunners, over: () => boolean): CycleRunners {
  const wrap = (inner: AgentRunner): AgentRunner => ({
    async run(request, bus) {
      if (over()) return inner.run({ ...request, signal: AbortSignal.abort() }, bus);
      const outcome = await inner.run(request, bus);
      await ctx.addCall(outcome.costUsd, outcome.costReported);
      return outcome;
    },
  });
  return {
    planner: wrap(runners.planner),
    implementer: wrap(runners.implementer),
    verifier: wrap(runners.verifier),
  };
}

/**
 * The cycle's agents under the same supervision as every other engine's, and a usage limit waited
 * out as `relais cycle` does (issue 15, cycle/supervision.ts): the countdown, the phase's timeout
 * and breaker paused, `waiting_until` in WORKFLOW.json (an interrupted wait resumes with
 * ralphy start), then the same call again, up to MAX_LIMIT_WAITS times. The cycle never sees the
 * limit as the agent's failure, so it counts toward no retry, stuck count or re-plan.
 */
function supervised(
  ctx: WorkflowContext,
  breaker: CircuitBreaker | null,
  runners: CycleRunners,
): CycleRunners {
  const wrap = (inner: CycleRunners[keyof CycleRunners]): AgentRunner => ({
    async run(request, bus) {
      for (let waits = 0; ; waits++) {
        let limit: UsageLimit | null = null;
        const outcome = await supervisedRunner(inner, {
          breaker,
          clock: ctx.options.clock,
          onBreaker: ctx.breakerReporter(breaker),
          watch: evidenceWatcher(ctx, breaker),
          onLimit: (found) => {
            limit = found;
          },
        }).run(request, bus);
        const found = limit as UsageLimit | null;
        if (!found || waits >= MAX_LIMIT_WAITS || request.signal.aborted) return outcome;
        await waitForReset({
          limit: found,
          bus: ctx.bus,
          clock: ctx.options.clock,
          breaker,
          signal: request.signal,
          onWaiting: (until) => ctx.waiting(until),
        });
        if (request.signal.aborted) return outcome;
      }
    },
  });
  return {
    planner: wrap(runners.planner),
    implementer: wrap(runners.implementer),
    verifier: wrap(runners.verifier),
  };
}

/**
 * TASKS.md gives no ESTIMATED_DIFF: this estimate makes the cycle's diff check (ESTIMATED_DIFF x
 * cycle.verify.diff_factor) the config's own limit, diff_limits.default_max_lines_changed.
 */
function diffEstimate(ctx: WorkflowContext): number {
  const { diff_limits: limits, cycle } = ctx.setup.config;
  return Math.max(1, Math.ceil(limits.default_max_lines_changed / cycle.verify.diff_factor));
}

/**
 * A TASKS.md task as a cycle task: its files (modified when they exist, added otherwise), the
 * project's tests as the deterministic criterion, and its description as the criterion the verifier
 * judges.
 */
function plannedTask(ctx: WorkflowContext, task: PlanTask): PlannedTask {
  return {
    taskId: `T${task.number}`,
    title: task.title,
    summary: task.description || task.title,
    files: task.files.map((path) => ({
      path,
      action: existsInRepo(ctx.setup.facts.root, path) ? ('modify' as const) : ('add' as const),
      rationale: task.title,
    })),
    acceptance: [
      { id: 'AC1', text: 'DET: All tests pass', kind: 'DET' },
      { id: 'AC2', text: `LLM: ${task.description || task.title}`, kind: 'LLM' },
    ],
    estimatedDiff: diffEstimate(ctx),
    dependsOn: [],
  };
}

/** A path named in TASKS.md, looked at only when it stays inside the repository. */
function existsInRepo(root: string, path: string): boolean {
  const full = resolve(root, path);
  return isInsideDir(full, root) && existsSync(full);
}
