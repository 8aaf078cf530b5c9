import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Pool } from 'pg';
import { identityEnv } from '../judge/commit.js';
import { Git } from '../judge/git.js';
import { writeFileAtomic } from '../workspace/atomic-write.js';
import { type RunRow, updateRun } from './store.js';

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

export async function restoreCheckout(spec: CheckoutSpec, row: RunRow): Promise<Git> {
  const { dir } = spec;
  if (!existsSync(join(dir, '.git'))) {
    await rm(dir, { recursive: true, force: true });
    await mkdir(dirname(dir), { recursive: true });
    await new Git(dirname(dir), spec.env).ok(['clone', '-q', '--', spec.repo, dir]);
  }
  const git = new Git(dir, spec.env);
  await git.ok(['fetch', '-q', '--prune', 'origin', '+refs/heads/*:refs/remotes/origin/*']);
  await git.ok(['checkout', '-q', '--detach']);
  await git.ok(['reset', '-q', '--hard']);
  await git.ok(['clean', '-q', '-fd']);
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
  if (row.feature_branch && row.head) {
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
  return git;
}

async function baseBranch(git: Git): Promise<string> {
  const head = await git.run(['symbolic-ref', '-q', '--short', 'refs/remotes/origin/HEAD']);
  const name = head.stdout
    .toString('utf8')
    .trim()
    .replace(/^origin\//, '');
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
 * After every judged commit and at the end of every step: the branch goes to the remote first,
 * then the row records that commit and the workflow file. A kill between the two leaves the
 * remote ahead of the row; the next step restores the row's commit and pushes over it.
 */
export async function checkpoint(pool: Pool, git: Git, runId: string, dir: string): Promise<void> {
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
  if (onBranch) await git.ok(['push', '-q', '--no-verify', '--force', 'origin', `HEAD:refs/heads/${branch}`]);
  await updateRun(pool, runId, {
    workflow_json: text,
    state: workflow.state,
    status: workflow.status,
    pr_url: workflow.pr_url,
    detail: workflow.failure_detail,
    ...(onBranch ? { feature_branch: branch, head } : {}),
  });
}
