import type { CycleCode } from '../codes.js';
import type { ActionResult, CycleContext } from '../context.js';
import type { Decision } from '../decide.js';
import { freeBranchName, headOf, stashIfDirty } from '../git-ops.js';
import { notify } from '../notifications.js';
import type { CycleState } from '../state.js';
import { okResult, pauseResult } from './common.js';

/** Seed 003 rollback_and_escalate, escalate and summarize. */

/**
 * The runner's rollback (never the implementer's): stash a dirty tree, keep the failed work on
 * `rescue-<run_id>-<task>` (`-2`, `-3`... when taken), reset the branch to last_good.commit. With no
 * verified task yet, the plan's base commit is the last good state.
 */
export async function rollbackAndEscalate(ctx: CycleContext, state: CycleState): Promise<ActionResult> {
  const taskId = state.task.id ?? 'task';
  // The name first: nothing is moved until the rescue branch is sure to be created.
  const rescue = await freeBranchName(ctx.git, `rescue-${state.run_id}-${taskId}`);
  const stashed = await stashIfDirty(ctx.git, ctx.config.workspace_dir, `relais: ${taskId} before rollback`);
  const head = await headOf(ctx.git);
  await ctx.git.ok(['branch', rescue, head]);
  const target = state.last_good.commit ?? state.track.plan_base_commit;
  if (target) await ctx.git.ok(['reset', '--hard', '-q', target]);
  const details = `Rolled back after ${state.task.retry_count}x failure. Rescue: ${rescue}${target ? `; reset to ${target.slice(0, 12)}` : '; nothing to reset to'}${stashed ? '; leftovers stashed' : ''}`;
  const next: CycleState = {
    ...state,
    loop: { ...state.loop, progress_mark: null },
    task: { ...state.task, retry_count: 0, sub_step: 'generate', base_commit: null },
  };
  await notify(ctx, next, 'rollback', {
    title: `Task ${taskId} rolled back after ${state.task.retry_count} failures`,
    lines: [details, ...state.task.failure_context.slice(-5)],
  });
  return pauseResult(ctx, next, 'CYCLE_ROLLED_BACK', details);
}

export async function escalate(
  ctx: CycleContext,
  state: CycleState,
  decision: Decision,
  budgetExceeded: boolean,
): Promise<ActionResult> {
  const code: CycleCode = budgetExceeded
    ? 'CYCLE_BUDGET_EXCEEDED'
    : decision.row === 2
      ? 'CYCLE_STUCK'
      : decision.row === null
        ? 'CYCLE_NO_DECIDE_ROW'
        : 'CYCLE_STATE_INCONSISTENT';
  const event = code === 'CYCLE_STUCK' ? 'stuck' : 'escalation';
  await notify(
    ctx,
    state,
    event,
    {
      title: `Escalation: ${decision.reason}`,
      lines: [
        `what went wrong: ${decision.reason}`,
        `what was tried: ${state.last_action ?? 'nothing yet'}${state.last_result ? ` (${state.last_result.details})` : ''}`,
        ...state.task.failure_context.slice(-5),
      ],
    },
    event === 'escalation' ? 'pause' : undefined,
  );
  return pauseResult(ctx, state, code, decision.reason);
}

export async function summarize(ctx: CycleContext, state: CycleState): Promise<ActionResult> {
  const tracks = state.tracks_completed;
  const lines = [
    `${tracks.length} track(s) complete: ${tracks.map((t) => `${t.id} (${t.tasks} task(s))`).join(', ') || 'none'}`,
    `roadmap phases complete: ${state.roadmap.phases_completed.join(', ') || 'none'}`,
    `${state.loop.iteration} cycle(s) before this one; last good commit ${state.last_good.commit?.slice(0, 12) ?? 'none'} (${state.last_good.task_id ?? '-'})`,
    `run ${state.run_id}, started ${state.budget.started_at}`,
  ];
  await notify(ctx, state, 'complete', { title: 'Project complete', lines });
  return { ...okResult(state, lines[0] as string), done: true };
}
