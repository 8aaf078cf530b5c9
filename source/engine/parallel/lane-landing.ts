import micromatch from 'micromatch';
import { Git, splitNul } from '../judge/git.js';
import type { AttemptRecord } from '../protocol/workflow.js';
import { interruptionOf } from '../workflow/interruption.js';
import { askGate, stopped } from '../workflow/phase-helpers.js';
import { commitTaskStatus } from '../workflow/task-status.js';
import type { Landing } from '../workflow/tick-target.js';
import type { Lane } from './lane.js';
import type { Worktree } from './worktrees.js';

/**
 * How a lane's verified task reaches the integration branch (issue 19). First the lane's fence:
 * only what the task declared may land beside the other lanes. A best-of attempt then waits for
 * the runner's choice among all attempts (discarded unless chosen). Then the merge queue: a
 * conflict or a check failing on the merged tree re-runs the task once on the new base, and a
 * second failure asks a human.
 */
export async function landLane(lane: Lane, signal: AbortSignal): Promise<Landing> {
  const outside = await outsideScope(lane.tree, lane.scope, lane.ctx.options.env);
  if (outside.length > 0) {
    const why = `task ${lane.task.number} changed ${outside.slice(0, 10).join(', ')}, outside its declared Scope (${(lane.scope ?? []).join(', ')})`;
    await lane.moveToFreshTree(why);
    return {
      kind: 'again',
      note: `${why}. Other lanes work beside this one: change only paths within the task's Scope.`,
    };
  }
  if (lane.slot) {
    const chosen = await awaitChoice(lane, signal);
    if (chosen) return chosen;
  }
  return throughQueue(lane, signal);
}

/** A best-of attempt: verified, it waits for the other attempts; null when it was chosen. */
async function awaitChoice(lane: Lane, signal: AbortSignal): Promise<Landing | null> {
  const group = lane.slot?.group;
  if (!lane.slot || !group) return null;
  const size = await diffSize(lane.tree, lane.ctx.options.env);
  const record: AttemptRecord = {
    lane: lane.name,
    verified: true,
    lines_changed: size.lines,
    files_changed: size.files,
    detail: `verified, ${size.lines} line(s) in ${size.files} file(s)`,
  };
  if (!group.decided) {
    const others = group.pending.filter((slot) => slot !== lane.slot?.index);
    lane.show(
      'candidate',
      `${record.detail}; ${others.length > 0 ? `waits for attempt(s) ${others.join(', ')}` : 'the runner chooses'}`,
    );
  }
  const verdict = await group.submit(lane.slot.index, record, signal);
  if (verdict === 'aborted')
    return {
      kind: 'end',
      result: interruptionOf(lane.ctx, lane.breaker, lane.shared.phase) ?? stopped(lane.ctx),
    };
  if (verdict === 'lost')
    return { kind: 'discarded', why: group.decided?.reason ?? 'another attempt was chosen' };
  return null;
}

/** The merge queue, and what a failed landing leads to. */
async function throughQueue(lane: Lane, signal: AbortSignal): Promise<Landing> {
  const { ctx, task } = lane;
  lane.show('merging', null);
  let statusCommit: string | null = null;
  const outcome = await lane.shared.queue.land(lane.tree, signal, async () => {
    await ctx.refreshFacts();
    statusCommit = await commitTaskStatus(ctx, task.number, 'completed');
  });
  if (outcome.kind === 'aborted')
    return { kind: 'end', result: interruptionOf(ctx, lane.breaker, lane.shared.phase) ?? stopped(ctx) };
  if (outcome.kind === 'landed') {
    lane.show('landed', outcome.commit.slice(0, 12));
    await lane.shared.worktrees.remove(lane.tree);
    return { kind: 'landed', commits: [outcome.commit, statusCommit].filter((c): c is string => !!c) };
  }
  lane.mergeFailures++;
  const why = outcome.detail;
  if (lane.mergeFailures === 1) {
    // Issue 19: a conflict or a post-merge failure re-runs the task once on the new base.
    await lane.moveToFreshTree(why);
    return {
      kind: 'again',
      note: `Your verified change for task ${task.number} could not land on the integration branch: ${why}. Other tasks landed meanwhile; this tick starts again from the new base. Propose the task again so that it fits the code as it is now.`,
    };
  }
  return askAfterSecondFailure(lane, why, outcome.kind === 'conflict' ? outcome.files : []);
}

/** The second failed landing: a human sees the conflict and decides whether to try once more. */
async function askAfterSecondFailure(lane: Lane, why: string, files: string[]): Promise<Landing> {
  const { ctx, task, tree } = lane;
  const lines = [
    why,
    ...(files.length > 0 ? [`Conflicting files: ${files.join(', ')}`] : []),
    `The attempt is kept in ${tree.path} (branch ${tree.branch}).`,
    'Approve to run the task once more on the current integration branch; reject to stop the workflow.',
  ];
  const reply = await askGate(
    ctx,
    'input',
    `Task ${task.number} "${task.title}" could not land twice (lane ${tree.name})`,
    lines,
    'yes_no',
    lane.breaker,
    [],
    tree.name,
  );
  if (reply.decision === 'approve') {
    lane.mergeFailures = 1;
    await lane.moveToFreshTree(why);
    return { kind: 'again', note: `The human asked for one more try after: ${why}.` };
  }
  await lane.shared.worktrees.keep(tree, task.number, why, ctx.now());
  return {
    kind: 'end',
    result: {
      kind: 'fail',
      reason: 'merge_failed',
      detail: `task ${task.number}: ${why} (kept in ${tree.path})`,
    },
  };
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

/** What the lane's branch changed from its base: lines added plus deleted, and files. */
export async function diffSize(
  tree: Worktree,
  env: NodeJS.ProcessEnv,
): Promise<{ lines: number; files: number }> {
  const git = new Git(tree.path, env);
  const numstat = await git.run(['diff', '--numstat', '-z', '--no-renames', tree.base, 'HEAD']);
  let lines = 0;
  let files = 0;
  // `added<TAB>deleted<TAB>path<NUL>`; a binary file counts "-" lines, as a file with no line.
  for (const entry of splitNul(numstat.stdout)) {
    const [added, deleted] = entry.split('\t');
    if (added === undefined || deleted === undefined) continue;
    files++;
    lines += (Number.parseInt(added, 10) || 0) + (Number.parseInt(deleted, 10) || 0);
  }
  return { lines, files };
}
