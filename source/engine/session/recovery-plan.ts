import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Git } from '../judge/git.js';
import { refsMayExistUnder } from '../judge/refs-may-exist.js';
import { type Inflight, inflightSchema } from '../protocol/inflight.js';
import { readJsonValidated } from '../workspace/atomic-write.js';
import type { WorkspacePaths } from '../workspace/paths.js';

/**
 * What the recovery of an interrupted run will do, decided without changing anything, so
 * `relais status --preflight` and `relais run` reach the same verdict (issue 21 item 3).
 *
 * Issue 21 item 2: recovery never moves the user's commits. INFLIGHT.json records where the tick
 * last left the branch once its builder had ended (`tick_head`, or the judged commit). Commits on
 * top of that point were made after the runner stopped: they stay on the branch. When the tick's
 * own commits lie under them, or the runner died while the builder could still commit, nobody can
 * tell whose commits are whose: recovery stops and asks, naming the exact commands.
 */

export type RecoveryPlan =
  | { readonly kind: 'none' }
  | { readonly kind: 'blocked'; readonly detail: string }
  | {
      readonly kind: 'recover';
      readonly inflight: Inflight;
      /** Where the branch goes: base_commit when only the tick's commits sit on it, else HEAD. */
      readonly branchTo: string;
      /** The tick's commits to keep under refs/relais/recovered/<run_id> (head of them), or null. */
      readonly tickCommitsAt: string | null;
      /** Commits made after the runner stopped, kept on the branch (short ids and subjects). */
      readonly userCommits: readonly string[];
    };

/** `git update-ref refs/relais/keep/<run_id> HEAD`: the user vouches for every commit on the branch. */
export function keepRef(runId: string): string {
  return `refs/relais/keep/${runId}`;
}

export function recoveredRef(runId: string): string {
  return `refs/relais/recovered/${runId}`;
}

export async function planRecovery(git: Git, paths: WorkspacePaths): Promise<RecoveryPlan> {
  const read = await readJsonValidated(paths.inflight, inflightSchema);
  if (read.kind === 'missing') return { kind: 'none' };
  if (read.kind === 'invalid')
    return {
      kind: 'blocked',
      detail: `${paths.relDir}/INFLIGHT.json is unreadable (${read.reason}), so relais cannot tell what the interrupted run changed; look at \`git log\` and \`git status\`, put the branch where you want it, then delete ${paths.relDir}/INFLIGHT.json`,
    };
  const inflight = read.value;
  if (inflight.unresolved.length > 0) return { kind: 'blocked', detail: unresolvedDetail(inflight, paths) };
  const head = await commitOf(git, 'HEAD');
  if (!head) return { kind: 'blocked', detail: brokenHeadDetail(inflight, paths) };
  const base = inflight.base_commit;
  const stay = (userCommits: readonly string[]): RecoveryPlan => ({
    kind: 'recover',
    inflight,
    branchTo: head,
    tickCommitsAt: null,
    userCommits,
  });
  if (head === base) return stay([]);
  if ((await commitOf(git, keepRef(inflight.run_id))) === head)
    return stay(await listCommits(git, base, head));
  const tickPoints = [inflight.committed, inflight.tick_head].filter((c): c is string => c !== null);
  if (tickPoints.includes(head))
    return { kind: 'recover', inflight, branchTo: base, tickCommitsAt: head, userCommits: [] };
  // The newest point the tick is known to have left the branch at, under HEAD.
  for (const point of [...tickPoints, base]) {
    if (!(await isAncestor(git, point, head))) continue;
    const after = await listCommits(git, point, head);
    if (point === base && inflight.tick_head !== null) return stay(after);
    if (point === base) break; // died while the builder ran: its commits and the user's look alike
    return { kind: 'blocked', detail: await tickUnderUserDetail(git, inflight, point, after) };
  }
  return { kind: 'blocked', detail: await cannotTellDetail(git, inflight, head) };
}

async function tickUnderUserDetail(
  git: Git,
  inflight: Inflight,
  tickHead: string,
  after: readonly string[],
): Promise<string> {
  const base = inflight.base_commit.slice(0, 12);
  const tick = await listCommits(git, inflight.base_commit, tickHead);
  return [
    `interrupted run ${inflight.run_id} left ${tick.length} unjudged commit(s) (${tick.join('; ')}) and ${after.length} commit(s) were made on top of them after it stopped (${after.join('; ')}).`,
    'Relais does not rewrite your commits, so nothing was moved.',
    `To drop the run's commits and keep yours: git rebase --onto ${base} ${tickHead.slice(0, 12)}.`,
    `To keep everything on the branch as it is: git update-ref ${keepRef(inflight.run_id)} HEAD.`,
    'Then run relais again.',
  ].join(' ');
}

async function cannotTellDetail(git: Git, inflight: Inflight, head: string): Promise<string> {
  const base = inflight.base_commit;
  const since = (await isAncestor(git, base, head)) ? await listCommits(git, base, head) : [];
  const what =
    since.length > 0
      ? `the branch holds ${since.length} commit(s) since the run's base ${base.slice(0, 12)} (${since.join('; ')}), and the run was stopped while its builder could still commit, so relais cannot tell the builder's commits from yours`
      : `the branch no longer contains the run's base ${base.slice(0, 12)} (HEAD is ${head.slice(0, 12)})`;
  return [
    `interrupted run ${inflight.run_id}: ${what}. Nothing was moved.`,
    `If every commit on the branch is yours: git update-ref ${keepRef(inflight.run_id)} HEAD.`,
    `If they are the run's and should go: git branch relais-dropped-${inflight.run_id} HEAD && git reset --hard ${base.slice(0, 12)}.`,
    'Then run relais again.',
  ].join(' ');
}

export function unresolvedDetail(inflight: Inflight, paths: WorkspacePaths): string {
  const list = inflight.unresolved.slice(0, 10).join(', ');
  return `interrupted run ${inflight.run_id} changed ignored files that cannot be restored: ${list}. Restore them (e.g. reinstall dependencies), then delete ${paths.relDir}/INFLIGHT.json`;
}

/**
 * Issue 14: a branch ref holding garbage makes HEAD unreadable; git refuses to update a broken
 * ref, so the fix removes the loose file first.
 */
export function brokenHeadDetail(inflight: Inflight, paths: WorkspacePaths, gitCommonDir?: string): string {
  const target = inflight.tick_head ?? inflight.base_commit;
  if (!inflight.branch_ref)
    return `HEAD does not name a commit after interrupted run ${inflight.run_id}; put it back with: git update-ref --no-deref HEAD ${target}. Then run relais again (it finishes the recovery)`;
  const loose = gitCommonDir ? join(gitCommonDir, inflight.branch_ref) : null;
  const removal = loose && existsSync(loose) ? `rm ${join('.git', inflight.branch_ref)} && ` : '';
  return `${inflight.branch_ref} does not name a commit after interrupted run ${inflight.run_id} (its rollback could not finish; ${paths.relDir}/INFLIGHT.json is kept). Put it back with: ${removal}git update-ref ${inflight.branch_ref} ${target}. Then run relais again (it finishes the recovery)`;
}

async function commitOf(git: Git, rev: string): Promise<string | null> {
  const out = await git.run(['rev-parse', '--verify', '-q', `${rev}^{commit}`]);
  return out.code === 0 ? out.stdout.toString('utf8').trim() : null;
}

async function isAncestor(git: Git, ancestor: string, of: string): Promise<boolean> {
  return (await git.run(['merge-base', '--is-ancestor', ancestor, of])).code === 0;
}

/** Short id, author and subject, newest first (rev-list: plumbing, no signature programs run). */
async function listCommits(git: Git, from: string, to: string): Promise<string[]> {
  const out = await git.run(['rev-list', '--max-count=20', '--format=%h %an: %s', `${from}..${to}`]);
  if (out.code !== 0) return [];
  return out.stdout
    .toString('utf8')
    .split('\n')
    .filter((line) => line.length > 0 && !line.startsWith('commit '));
}

/**
 * For `relais status`: what the next run will do about an interrupted one, and everything earlier
 * recoveries moved aside, read from the repository itself (refs and folders), so it is always said.
 */
export async function recoveryStatusLines(
  git: Git,
  paths: WorkspacePaths,
  commonDir: string,
): Promise<string[]> {
  const lines: string[] = [];
  const plan = await planRecovery(git, paths);
  if (plan.kind === 'blocked') lines.push(`an interrupted run needs you first: ${plan.detail}`);
  if (plan.kind === 'recover') {
    const { inflight } = plan;
    lines.push(
      plan.tickCommitsAt
        ? `run ${inflight.run_id} was interrupted; the next run takes its commits off the branch (kept at ${recoveredRef(inflight.run_id)}) and puts the branch back on ${inflight.base_commit.slice(0, 12)}`
        : `run ${inflight.run_id} was interrupted; the next run leaves the branch at ${plan.branchTo.slice(0, 12)}${plan.userCommits.length > 0 ? ` with your ${plan.userCommits.length} commit(s)` : ''} and moves uncommitted leftovers to ${paths.relDir}/recovered/${inflight.run_id}/`,
    );
  }
  // Without any, `relais status` starts no git to list them (about 3 ms of its start, issue 17).
  if (refsMayExistUnder(commonDir, 'refs/relais/recovered')) {
    const refs = await git.run([
      'for-each-ref',
      '--format=%(refname) %(objectname:short)',
      'refs/relais/recovered/',
    ]);
    for (const line of refs.stdout.toString('utf8').split('\n').filter(Boolean))
      lines.push(`kept aside by a recovery: commits at ${line}`);
  }
  const folders = await readdir(paths.recoveredDir).catch(() => [] as string[]);
  for (const name of folders)
    lines.push(`kept aside by a recovery: files in ${paths.relDir}/recovered/${name}/`);
  return lines;
}
