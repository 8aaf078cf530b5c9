import { writeFileSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type Git, splitNul } from '../judge/git.js';
import type { GitSideState } from '../judge/git-side-state.js';
import { clearForRollback, restoreFlags } from '../judge/git-side-state.js';
import { checkAndRestore, type ProtectedGuard } from '../judge/protected-files.js';
import type { RepoFacts } from '../judge/repo.js';
import { deserializeGuard, serializeGuard, serializeRoots } from '../judge/serialize-guard.js';
import { type Inflight, inflightSchema } from '../protocol/inflight.js';
import { readJsonValidated, writeJsonAtomic } from '../workspace/atomic-write.js';
import type { WorkspacePaths } from '../workspace/paths.js';
import { isInsideDir } from '../workspace/safe-path.js';

/**
 * Recovery from a run that was killed mid-tick (seed 001 PR2: "the next run still recovers
 * cleanly"). Its INFLIGHT.json says where the tick started; the next run, once it holds the lock,
 * restores the git control files, puts the branch back on base_commit and the tree with it. Nothing
 * is lost: the interrupted run's tracked changes are saved as a patch and its untracked files are
 * moved, both under relais/recovered/<run_id>/.
 */

export async function markInflight(
  paths: WorkspacePaths,
  facts: RepoFacts,
  runId: string,
  gitGuard: ProtectedGuard,
  side: GitSideState,
  now: Date,
): Promise<void> {
  const inRepoGit = (p: string) =>
    isInsideDir(p, facts.gitDir) || isInsideDir(p, facts.commonDir) || p === join(facts.root, '.git');
  const inflight: Inflight = {
    run_id: runId,
    base_commit: facts.head,
    branch_ref: facts.branchRef,
    started_at: now.toISOString(),
    git_dir_identities: Object.fromEntries(gitGuard.identities),
    git_roots: serializeRoots(gitGuard, inRepoGit),
    git_files: serializeGuard(gitGuard, inRepoGit),
    flagged: Object.fromEntries(side.flagged),
    replace_refs: [...side.replaceRefs],
  };
  await writeJsonAtomic(paths.inflight, inflightSchema, inflight);
}

export async function clearInflight(paths: WorkspacePaths): Promise<void> {
  await rm(paths.inflight, { force: true });
}

export type Recovery =
  | { kind: 'none' }
  | { kind: 'recovered'; note: string }
  | { kind: 'failed'; detail: string };

export async function recoverInterruptedRun(
  git: Git,
  facts: RepoFacts,
  paths: WorkspacePaths,
): Promise<Recovery> {
  const read = await readJsonValidated(paths.inflight, inflightSchema);
  if (read.kind === 'missing') return { kind: 'none' };
  if (read.kind === 'invalid')
    return { kind: 'failed', detail: `${paths.relDir}/INFLIGHT.json: ${read.reason}` };
  const inflight = read.value;
  try {
    // checkAndRestore refuses (RepositoryReplacedError) when the git folder is not the one recorded.
    await checkAndRestore(deserializeGuard(inflight), facts, paths);
    const head = (await git.run(['rev-parse', '--verify', '-q', 'HEAD^{commit}'])).stdout
      .toString('utf8')
      .trim();
    if (await committedByThisRun(git, head, inflight)) {
      // It was killed after committing its judged tree: the work is done, only the marker is left.
      await clearInflight(paths);
      return {
        kind: 'recovered',
        note: `interrupted run ${inflight.run_id} had already committed ${head.slice(0, 12)}; kept`,
      };
    }
    const keep = join(paths.recoveredDir, inflight.run_id);
    await mkdir(keep, { recursive: true });
    const userFlags = await clearForRollback(git, {
      flagged: new Map(Object.entries(inflight.flagged)),
      replaceRefs: new Set(inflight.replace_refs),
    });
    const patch = await git.run(['diff', '--binary', '--no-ext-diff', '--no-textconv', inflight.base_commit]);
    if (patch.stdout.length > 0) writeFileSync(join(keep, 'worktree.patch'), patch.stdout);
    if (inflight.branch_ref) {
      await git.ok(['symbolic-ref', 'HEAD', inflight.branch_ref]);
      await git.ok([
        'update-ref',
        '-m',
        'relais: recover interrupted run',
        inflight.branch_ref,
        inflight.base_commit,
      ]);
    } else {
      await git.ok([
        'update-ref',
        '--no-deref',
        '-m',
        'relais: recover interrupted run',
        'HEAD',
        inflight.base_commit,
      ]);
    }
    await git.ok(['reset', '--hard', '-q', inflight.base_commit]);
    await restoreFlags(git, userFlags);
    const untracked = splitNul(await git.ok(['ls-files', '-z', '--others', '--exclude-standard']));
    for (const rel of untracked) {
      await mkdir(dirname(join(keep, 'untracked', rel)), { recursive: true });
      await rename(join(facts.root, rel), join(keep, 'untracked', rel));
    }
    await clearInflight(paths);
    const kept = `${paths.relDir}/recovered/${inflight.run_id}/`;
    return {
      kind: 'recovered',
      note: `rolled back interrupted run ${inflight.run_id} to ${inflight.base_commit.slice(0, 12)}; its changes are kept in ${kept}`,
    };
  } catch (error) {
    return {
      kind: 'failed',
      detail: `recovering interrupted run ${inflight.run_id} failed: ${(error as Error).message}`,
    };
  }
}

async function committedByThisRun(git: Git, head: string, inflight: Inflight): Promise<boolean> {
  if (!head || head === inflight.base_commit) return false;
  const parent = await git.run(['rev-parse', '--verify', '-q', `${head}^`]);
  if (parent.stdout.toString('utf8').trim() !== inflight.base_commit) return false;
  const message = (await git.run(['log', '-1', '--format=%B', head])).stdout.toString('utf8');
  return message.includes(`Relais-Run: ${inflight.run_id}`);
}
