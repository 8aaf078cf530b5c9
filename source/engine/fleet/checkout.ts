import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Pool } from 'pg';
import { identityEnv } from '../judge/commit.js';
import { Git } from '../judge/git.js';
import { writeFileAtomic } from '../workspace/atomic-write.js';
import { fencedTransaction, type Owner } from './fence.js';
import { FLEET_SCHEMA as S } from './settings.js';
import { type RunRow, readRun, updateRun } from './store.js';

/**
 * The repository a step works in, re-created from the remote and the run's row (issue 20: "a
 * worker that resumes re-creates the repository state from the remote"). Every step starts here,
 * on a fresh worker or the one that ran the step before: the same code path either way, so a
 * takeover is not a special case. The runner-owned relais/WORKFLOW.json is not in git; its last
 * checkpoint lives in the run's row, beside the commit it belongs to.
 */

export interface CheckoutSpec {
  readonly dir: string;
  readonly repo: string;
  readonly env: NodeJS.ProcessEnv;
}

/** A restored checkout: its git, and what the remote's feature branch held when it was fetched. */
export interface Restored {
  readonly git: Git;
  /** The remote feature branch's commit, null when it does not exist (or the run has none yet). */
  readonly remoteHead: string | null;
}

/** The remote feature branch moved to a commit this run never pushed: someone else writes there. */
export class ForeignPushError extends Error {
  constructor(branch: string, found: string) {
    super(
      `the remote branch ${branch} is at ${found.slice(0, 12)}, a commit this run never pushed: someone else writes to it, and the run stops rather than overwrite their work`,
    );
  }
}

export async function restoreCheckout(spec: CheckoutSpec, row: RunRow): Promise<Restored> {
  const { dir } = spec;
  if (!existsSync(join(dir, '.git'))) {
    await rm(dir, { recursive: true, force: true });
    await mkdir(dirname(dir), { recursive: true });
    await new Git(dirname(dir), spec.env).ok(['clone', '-q', '--', spec.repo, dir]);
  }
  const git = new Git(dir, spec.env);
  await git.ok(['fetch', '-q', '--prune', 'origin', '+refs/heads/*:refs/remotes/origin/*']);
  // A clone of a remote whose HEAD names a branch it does not have has no commit checked out yet.
  if ((await git.run(['rev-parse', '-q', '--verify', 'HEAD'])).code === 0) {
    await git.ok(['checkout', '-q', '--detach']);
    await git.ok(['reset', '-q', '--hard']);
    await git.ok(['clean', '-q', '-fd']);
  }
  const base = await baseBranch(git);
  // Every branch of the remote as a local one: the workflow picks a free branch name among them.
  const remoteBranches = (
    await git.text(['for-each-ref', '--format=%(refname:short)', 'refs/remotes/origin'])
  )
    .split('\n')
    .map((r) => r.replace(/^origin\//, ''))
    .filter((b) => b && b !== 'HEAD' && b !== 'origin');
  for (const branch of remoteBranches)
    await git.ok(['branch', '-q', '-f', '--no-track', branch, `origin/${branch}`]);
  let remoteHead: string | null = null;
  if (row.feature_branch && row.head) {
    remoteHead = await remoteBranchHead(git, row.feature_branch);
    if (remoteHead !== null && !ownCommit(row, remoteHead))
      throw new ForeignPushError(row.feature_branch, remoteHead);
    await git.ok(['checkout', '-q', '-B', row.feature_branch, row.head]);
  } else {
    await git.ok(['checkout', '-q', '-B', base, `origin/${base}`]);
    await applySubmission(git, dir, row);
  }
  const workflowFile = join(dir, 'relais', 'WORKFLOW.json');
  if (row.workflow_json) {
    await mkdir(dirname(workflowFile), { recursive: true });
    await writeFileAtomic(workflowFile, row.workflow_json);
  } else {
    await rm(workflowFile, { force: true });
  }
  await restorePlanner(dir, row.planner_json);
  return { git, remoteHead };
}

/** The recorded head, or a commit an attempt of this run meant to push (a kill may cut in after the push). */
function ownCommit(row: Pick<RunRow, 'head' | 'pushed'>, commit: string): boolean {
  return commit === row.head || row.pushed.includes(commit);
}

async function remoteBranchHead(git: Git, branch: string): Promise<string | null> {
  const found = await git.run(['rev-parse', '-q', '--verify', `refs/remotes/origin/${branch}^{commit}`]);
  return found.code === 0 ? found.stdout.toString('utf8').trim() : null;
}

/** The planner's session files live in relais/planner/ (not in git): the row carries them between steps. */
const PLANNER_DIR = join('relais', 'planner');
const PLANNER_MAX_BYTES = 2_000_000;

async function restorePlanner(dir: string, json: string | null): Promise<void> {
  const root = join(dir, PLANNER_DIR);
  await rm(root, { recursive: true, force: true });
  if (json === null) return;
  const files = JSON.parse(json) as Record<string, string>;
  for (const [path, text] of Object.entries(files)) {
    const target = join(root, path);
    // Paths came from our own snapshot; still, nothing lands outside relais/planner/.
    if (!target.startsWith(`${root}/`)) continue;
    await mkdir(dirname(target), { recursive: true });
    await writeFileAtomic(target, text);
  }
}

export async function snapshotPlanner(dir: string): Promise<string | null> {
  const { readdir, readFile } = await import('node:fs/promises');
  const root = join(dir, PLANNER_DIR);
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => null);
  if (entries === null) return null;
  const files: Record<string, string> = {};
  let bytes = 0;
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const full = join(entry.parentPath, entry.name);
    const text = await readFile(full, 'utf8');
    bytes += text.length;
    if (bytes > PLANNER_MAX_BYTES) break;
    files[full.slice(root.length + 1)] = text;
  }
  return JSON.stringify(files);
}

/** The remote's default branch: what its HEAD names when it exists there, else main, else master. */
async function baseBranch(git: Git): Promise<string> {
  const head = await git.run(['symbolic-ref', '-q', '--short', 'refs/remotes/origin/HEAD']);
  const name = head.stdout
    .toString('utf8')
    .trim()
    .replace(/^origin\//, '');
  for (const candidate of [name, 'main', 'master'])
    if (
      candidate &&
      (await git.run(['rev-parse', '-q', '--verify', `refs/remotes/origin/${candidate}`])).code === 0
    )
      return candidate;
  return name || 'main';
}

/** `submit --prd FILE` / `--engine`: committed on the base in this checkout, so the tree is clean. */
async function applySubmission(git: Git, dir: string, row: RunRow): Promise<void> {
  const paths: string[] = [];
  if (row.prd !== null) {
    await writeFileAtomic(join(dir, 'PRD.md'), row.prd);
    paths.push('PRD.md');
  }
  if (row.engine !== null) {
    const configPath = join(dir, 'relais.config.json');
    const { readFile } = await import('node:fs/promises');
    const config = existsSync(configPath) ? JSON.parse(await readFile(configPath, 'utf8')) : {};
    config.workflow = { ...(config.workflow ?? {}), implementation_engine: row.engine };
    await writeFileAtomic(configPath, `${JSON.stringify(config, null, 2)}\n`);
    paths.push('relais.config.json');
  }
  if (paths.length === 0) return;
  await git.ok(['add', '--', ...paths]);
  const changed = await git.run(['diff', '--cached', '--quiet']);
  if (changed.code === 0) return;
  await git.ok(['commit', '-q', '--no-verify', '-m', `relais fleet: run ${row.run_id} settings`], {
    env: await identityEnv(git),
  });
}

/**
 * After every judged commit and at the end of every step: the branch goes to the remote, then the
 * row records that commit and the workflow file. Before the push, the commit is recorded as one
 * this run means to push (fenced: a resumed-elsewhere attempt cannot), and the push is
 * `--force-with-lease` on what the remote held when this attempt looked: it replaces only this
 * run's own commits (a kill between push and record leaves the remote ahead of the row, and the
 * next attempt restores the row's commit and pushes over it), never anyone else's.
 */
export interface Checkpoint {
  readonly pool: Pool;
  readonly git: Git;
  readonly runId: string;
  readonly dir: string;
  readonly owner: Owner;
  /** Resolves while this worker surely holds its lease (lease.ts); a push waits for it. */
  readonly leaseReady: () => Promise<void>;
  /** What the remote's feature branch holds as far as this attempt knows (null: absent). */
  remoteHead: string | null;
}

export async function checkpoint(point: Checkpoint): Promise<void> {
  const { pool, git, runId, dir, owner } = point;
  const { readFile } = await import('node:fs/promises');
  const text = await readFile(join(dir, 'relais', 'WORKFLOW.json'), 'utf8').catch(() => null);
  if (text === null) return;
  const workflow = JSON.parse(text) as {
    feature_branch: string | null;
    state: string;
    status: string;
    pr_url: string | null;
    failure_detail: string | null;
  };
  const head = await git.text(['rev-parse', 'HEAD']);
  const branch = workflow.feature_branch;
  const onBranch =
    branch !== null &&
    (await git.run(['symbolic-ref', '-q', '--short', 'HEAD'])).stdout.toString().trim() === branch;
  if (onBranch && point.remoteHead !== head) await pushOwnCommit(point, branch, head);
  await updateRun(
    pool,
    runId,
    {
      workflow_json: text,
      state: workflow.state,
      status: workflow.status,
      pr_url: workflow.pr_url,
      detail: workflow.failure_detail,
      planner_json: await snapshotPlanner(dir),
      ...(onBranch ? { feature_branch: branch, head } : {}),
    },
    owner,
  );
}

async function pushOwnCommit(point: Checkpoint, branch: string, head: string): Promise<void> {
  const { pool, git, runId, owner } = point;
  await fencedTransaction(pool, runId, owner, (c) =>
    c.query(
      `UPDATE ${S}.runs SET pushed = (array_append(pushed, $2))[greatest(1, cardinality(pushed) - 98):] WHERE run_id = $1`,
      [runId, head],
    ),
  );
  await point.leaseReady();
  // One retry: an earlier attempt of this run that was still pushing when this one started can
  // have moved the branch once (to a commit it recorded first); a third writer is refused.
  for (let tries = 0; ; tries++) {
    const expected = point.remoteHead ?? '';
    const pushed = await git.run([
      'push',
      '-q',
      '--no-verify',
      `--force-with-lease=refs/heads/${branch}:${expected}`,
      'origin',
      `HEAD:refs/heads/${branch}`,
    ]);
    if (pushed.code === 0) {
      point.remoteHead = head;
      return;
    }
    await git
      .ok(['fetch', '-q', 'origin', `+refs/heads/${branch}:refs/remotes/origin/${branch}`])
      .catch(() => undefined);
    const found = await remoteBranchHead(git, branch);
    if (found === head) {
      point.remoteHead = head;
      return;
    }
    const row = await readRun(pool, runId);
    const ours = found !== null && row !== null && ownCommit(row, found);
    if (found !== null && !ours) throw new ForeignPushError(branch, found);
    if (tries > 0 || !ours || found === point.remoteHead)
      throw new Error(`git push of ${branch} failed: ${pushed.stderr.trim().slice(0, 500)}`);
    point.remoteHead = found;
  }
}
