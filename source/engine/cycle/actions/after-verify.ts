import type { ActionResult, CycleContext } from '../context.js';
import { headOf } from '../git-ops.js';
import { notify } from '../notifications.js';
import { type CycleState, freshTask } from '../state.js';
import { planTaskCount, readPlan } from '../track-docs.js';
import { okResult, pauseResult } from './common.js';

/** Seed 003 reflect, retry_task and replan_task. */

export async function reflect(ctx: CycleContext, recorded: CycleState): Promise<ActionResult> {
  const now = ctx.now().toISOString();
  const head = await headOf(ctx.git);
  const state = await withPlanCount(ctx, recorded);
  const taskId = state.task.id as string;
  const gate = await notify(ctx, state, 'task_complete', {
    title: `Task complete: ${taskId} — ${state.task.description ?? ''}`,
    lines: [
      `commit ${head.slice(0, 12)}`,
      `task ${state.track.task_current} of ${state.track.task_count} in track ${state.track.id}`,
    ],
  });
  if (!gate.approved)
    return pauseResult(ctx, state, 'CYCLE_GATE_DECLINED', `task ${taskId} was not approved`);
  const base: CycleState = {
    ...state,
    last_good: { commit: head, task_id: taskId, timestamp: now },
    loop: { ...state.loop, stuck_count: 0, progress_mark: null },
  };
  if (state.track.task_current < state.track.task_count) {
    return okResult(
      {
        ...base,
        track: { ...state.track, task_current: state.track.task_current + 1 },
        task: freshTask(state),
      },
      `${taskId} done; next task ${state.track.task_current + 1} of ${state.track.task_count}`,
    );
  }
  const trackId = state.track.id as string;
  const done: CycleState = {
    ...base,
    phase: 'select-track',
    tracks_completed: [
      ...state.tracks_completed,
      {
        id: trackId,
        name: state.track.name ?? trackId,
        phase: state.track.phase,
        completed_at: now,
        tasks: state.track.task_count,
      },
    ],
    track: { ...state.track, status: 'complete' },
    task: { ...freshTask(state), sub_step: null },
  };
  await notify(ctx, done, 'track_complete', {
    title: `Track complete: ${trackId} — ${state.track.name ?? ''}`,
    lines: [`${state.track.task_count} task(s)`, `last good commit ${head.slice(0, 12)}`],
  });
  return okResult(done, `${taskId} done; track ${trackId} complete`);
}

/** The task count as the plan file has it now (a human may have added or removed tasks meanwhile). */
async function withPlanCount(ctx: CycleContext, state: CycleState): Promise<CycleState> {
  const read = await readPlan(ctx, state.track.id as string);
  if (!read.ok) return state;
  return { ...state, track: { ...state.track, task_count: planTaskCount(read.plan) } };
}

/** verify_task already counted the failure; this only re-enters implementation with its context. */
export function retryTask(state: CycleState): ActionResult {
  return okResult(
    { ...state, task: { ...state.task, sub_step: 'implement' } },
    `retry ${state.task.retry_count} of ${state.task.max_retries} for ${state.task.id}: ${state.task.failure_context.slice(-3).join('; ') || 'no detail'}`,
  );
}

export async function replanTask(ctx: CycleContext, state: CycleState): Promise<ActionResult> {
  const threshold = ctx.policy.escalation.stuck_threshold;
  const message = `Re-planning task ${state.task.id} after ${threshold} stuck cycles`;
  ctx.bus.emit({ type: 'log', level: 'warn', message });
  await notify(
    ctx,
    state,
    'replan',
    { title: message, lines: state.task.failure_context.slice(-5) },
    'notify',
  );
  return okResult(
    {
      ...state,
      loop: { ...state.loop, stuck_count: 0, progress_mark: null },
      task: {
        ...state.task,
        replan_attempted: true,
        retry_count: 0,
        sub_step: 'generate',
        // The plan being given up on: the re-plan may not come back with it (generate_task).
        failed_plans: state.task.plan_fingerprint
          ? [...state.task.failed_plans, state.task.plan_fingerprint].slice(-50)
          : state.task.failed_plans,
      },
    },
    message,
  );
}
