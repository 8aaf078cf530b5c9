import type { Git } from './git.js';
import { type RepoFacts, worktreeStatus } from './repo.js';
import { removeCreated } from './rollback.js';
import type { JudgeIndex } from './touched-set.js';
import { TreeChangedError } from './verified-tree.js';

/**
 * A successful execute tick commits exactly the tree the judge approved (DESIGN.md decision), as
 * one commit on base_commit: builder commits made during the tick are squashed into it. Plumbing
 * (write-tree, commit-tree, update-ref) runs no hooks. Anything verification changed afterwards
 * was not judged and is undone, so the next tick starts clean.
 */

export interface CommitResult {
  readonly commit: string | null;
  readonly notes: string[];
}

export async function commitJudgedTree(
  git: Git,
  facts: RepoFacts,
  index: JudgeIndex,
  message: string,
  /** Runs between creating the commit and moving the branch to it (the crash-recovery record). */
  beforeMove: (commit: string) => Promise<void>,
  /** The tree verification ran on; anything else is refused before a commit exists (issue 14). */
  expectedTree?: string,
): Promise<CommitResult> {
  const notes: string[] = [];
  const tree = await git.text(['write-tree'], { env: index.env });
  if (expectedTree !== undefined && tree !== expectedTree)
    throw new TreeChangedError(
      `the judge index now writes tree ${tree.slice(0, 12)}, not the verified tree ${expectedTree.slice(0, 12)}`,
    );
  const baseTree = await git.text(['rev-parse', `${facts.head}^{tree}`]);
  let commit: string | null = null;
  if (tree !== baseTree) {
    commit = await git.text(['commit-tree', tree, '-p', facts.head, '-F', '-'], {
      stdin: message,
      env: await identityEnv(git),
    });
    await beforeMove(commit);
    await git.ok([
      'update-ref',
      '-m',
      `relais: ${message.split('\n')[0] ?? ''}`,
      facts.branchRef ?? 'HEAD',
      commit,
    ]);
  } else {
    // Nothing to commit; if the builder committed changes that net to nothing, squash them away.
    await git.ok(['update-ref', '-m', 'relais: no change', facts.branchRef ?? 'HEAD', facts.head]);
  }
  await git.ok(['reset', '-q']);
  notes.push(...(await undoUnjudgedChanges(git)));
  return { commit, notes };
}

async function undoUnjudgedChanges(git: Git): Promise<string[]> {
  // One status walk gives both: tracked changes (restored from HEAD) and untracked files (removed).
  const entries = await worktreeStatus(git);
  const untracked = entries.filter((e) => e.startsWith('??')).map((e) => e.slice(3));
  const tracked = entries.filter((e) => !e.startsWith('??')).map((e) => e.slice(3));
  if (tracked.length > 0) {
    await git.ok(['checkout', '-q', 'HEAD', '--pathspec-from-file=-', '--pathspec-file-nul'], {
      stdin: `${tracked.join('\0')}\0`,
    });
  }
  await removeCreated(git.root, untracked);
  const count = tracked.length + untracked.length;
  return count > 0
    ? [
        `undid ${count} change(s) made after judging (verification side effects): ${[...tracked, ...untracked].slice(0, 5).join(', ')}`,
      ]
    : [];
}

/** Commits need an identity; when the user has none configured, the runner signs as itself. */
export async function identityEnv(git: Git): Promise<Record<string, string>> {
  const name = (await git.run(['config', 'user.name'])).stdout.toString().trim();
  const email = (await git.run(['config', 'user.email'])).stdout.toString().trim();
  const env: Record<string, string> = {};
  if (!name && !process.env.GIT_AUTHOR_NAME) env.GIT_AUTHOR_NAME = env.GIT_COMMITTER_NAME = 'Relais';
  if (!email && !process.env.GIT_AUTHOR_EMAIL)
    env.GIT_AUTHOR_EMAIL = env.GIT_COMMITTER_EMAIL = 'relais@localhost';
  return env;
}
