import type { AttemptRecord, TaskRecord } from '../protocol/workflow.js';
import type { PhaseResult } from '../workflow/context.js';
import type { TaskEnd } from '../workflow/tick-target.js';
import type { Choice } from './best-of-choice.js';
import { BestOfGroup } from './best-of-group.js';
import { Lane, type LaneEnd, type LanesShared } from './lane.js';
import { describeEnd, discardLane, endLane, failedLane } from './lane-end.js';

/**
 * Best of N (issue 19: `ralphy start --attempts K`, or `workflow.best_of` for a task TASKS.md
 * marks `Risk: high`): K builders try the same task at once, each in its own runner-owned
 * worktree, each tick judged and verified as usual, each tick's worst case reserved from the one
 * budget. Once all K are in, the runner chooses by its own verdict (verified first, then the
 * smallest diff within scope: best-of-choice.ts), records why (the task's `selection` in
 * WORKFLOW.json, an `attempts.decided` event, a log line, the PR body), sends only the winner to
 * the merge queue, and discards the others (worktrees and branches removed). No verified attempt:
 * the task fails, every attempt's worktree kept for a human.
 */
export async function runBestOf(
  shared: LanesShared,
  task: TaskRecord,
  scope: readonly string[] | null,
  of: number,
): Promise<PhaseResult | null> {
  const group = new BestOfGroup(of, (choice, records) => recordChoice(shared, task, of, choice, records));
  const ends = await Promise.all(
    Array.from({ length: of }, (_, i) => runAttempt(shared, task, scope, { index: i + 1, group })),
  );
  const choice = group.decided;
  const winner = group.winnerIndex;
  for (const [i, end] of ends.entries()) {
    if (!end) continue;
    if (winner !== null && i + 1 !== winner) await discardLane(shared, end, choice?.reason ?? 'not chosen');
    else await endLane(shared, end);
  }
  if (winner !== null) {
    const won = ends[winner - 1];
    return won ? asPhase(won.result) : failedLane(task, new Error('the chosen attempt did not report'));
  }
  if (ends.some((end) => end?.result?.kind === 'stopped')) return { kind: 'stopped' };
  const first = ends.find((end) => end?.result?.kind === 'fail')?.result;
  return {
    kind: 'fail',
    reason: first?.kind === 'fail' ? first.reason : 'tick_stopped',
    detail: `task ${task.number}: ${choice?.reason ?? `none of the ${of} attempts was verified`}`.slice(
      0,
      2000,
    ),
  };
}

/** One attempt; whatever happens to it, the group hears how it ended (no attempt waits forever). */
async function runAttempt(
  shared: LanesShared,
  task: TaskRecord,
  scope: readonly string[] | null,
  slot: { index: number; group: BestOfGroup },
): Promise<LaneEnd | null> {
  let lane: Lane | null = null;
  try {
    lane = await Lane.open(shared, task, scope, slot);
    const end = await lane.run();
    if (end.result !== null && end.result.kind !== 'discarded')
      await slot.group.ended(slot.index, unverified(lane.name, describeEnd(end.result)));
    return end;
  } catch (error) {
    // An attempt the runner could not run (git refused a worktree, a full disk) is one that failed.
    const failed = failedLane(task, error as Error);
    await slot.group.ended(slot.index, unverified(lane?.name ?? `task-${task.number}-0`, failed.detail));
    return lane ? { result: failed, lane } : null;
  }
}

async function recordChoice(
  shared: LanesShared,
  task: TaskRecord,
  of: number,
  choice: Choice,
  records: AttemptRecord[],
): Promise<void> {
  const { ctx } = shared;
  const reason = choice.reason.slice(0, 1000);
  try {
    await ctx.updateTask(task.number, {
      selection: { attempts: of, winner: choice.winner, reason, candidates: records },
    });
  } catch (error) {
    ctx.bus.emit({
      type: 'log',
      level: 'warn',
      message: `WORKFLOW.json not written: ${(error as Error).message}`,
    });
  }
  ctx.bus.emit({
    type: 'attempts.decided',
    task: task.number,
    title: task.title,
    winner: choice.winner,
    reason,
    candidates: records,
  });
}

function unverified(lane: string, detail: string): AttemptRecord {
  return { lane, verified: false, lines_changed: null, files_changed: null, detail: detail.slice(0, 500) };
}

function asPhase(result: TaskEnd | null): PhaseResult | null {
  // The chosen attempt is never discarded; if it somehow were, nothing landed.
  return result?.kind === 'discarded' ? { kind: 'fail', reason: 'tick_stopped', detail: result.why } : result;
}
