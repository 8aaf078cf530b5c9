import type { TaskRecord } from '../protocol/workflow.js';
import type { PhaseResult } from '../workflow/context.js';
import { pauseRequested } from '../workflow/interruption.js';
import type { TaskEnd } from '../workflow/tick-target.js';
import type { LaneEnd, LanesShared } from './lane.js';

/**
 * What becomes of a lane's worktree when its task ends (issue 19): landed, it is already gone
 * (lane-landing.ts); failed, it is kept for a human with why (`relais worktrees list` shows it);
 * stopped (an interrupt, or `paused` by the pause key), its record stays `running` and the next
 * start recovers it as an orphan (its commits kept, the task run again); discarded (a
 * best-of attempt the runner did not choose), it and the trees it left are removed with their
 * branches.
 */
export async function endLane(shared: LanesShared, end: LaneEnd): Promise<void> {
  const { result, lane } = end;
  if (result === null) return;
  if (result.kind === 'discarded') return discardLane(shared, end, result.why);
  const detail = describeEnd(result);
  if (result.kind === 'fail') {
    await shared.worktrees.keep(lane.tree, lane.task.number, detail, shared.ctx.now());
    lane.show('kept', detail);
  } else if (result.kind === 'stopped' && pauseRequested(shared.ctx))
    lane.show('paused', 'the pause key: ralphy start resumes the task (this worktree is recovered then)');
  else lane.show('failed', detail);
}

/** A best-of attempt the runner did not choose: its worktrees and branches go; its commits are not kept. */
export async function discardLane(shared: LanesShared, end: LaneEnd, why: string): Promise<void> {
  const { lane } = end;
  for (const tree of [...lane.left, lane.tree]) await shared.worktrees.remove(tree);
  lane.show('discarded', why.slice(0, 300));
}

/** A lane that threw (git refused a worktree, a full disk) ends as a failure with its reason. */
export function failedLane(task: TaskRecord, error: Error): Extract<PhaseResult, { kind: 'fail' }> {
  return {
    kind: 'fail',
    reason: 'tick_stopped',
    detail: `the lane of task ${task.number} failed: ${error.message}`.slice(0, 2000),
  };
}

export function describeEnd(result: TaskEnd): string {
  if (result.kind === 'fail') return `${result.reason}: ${result.detail}`;
  return result.kind === 'discarded' ? `discarded: ${result.why}` : result.kind;
}
