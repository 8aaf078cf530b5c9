import { constants } from 'node:fs';
import { copyFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type Git, splitNul } from './git.js';
import { type RepoFacts, worktreeStatus } from './repo.js';
import { removeCreated } from './rollback.js';
import type { JudgeIndex } from './touched-set.js';
import { TreeChangedError } from './verified-tree.js';

/**
 * A successful execute tick commits exactly the tree the judge approved (docs/ARCHITECTURE.md decision), as
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
  /**
   * The git-visible paths the judge staged, when nothing but the runner has run since the judge's
   * own full status pass (no verification command): the check for unjudged changes after the
   * commit then looks at these paths only. Undefined: the whole tree is checked.
   */
  onlyChanged?: readonly string[],
): Promise<CommitResult> {
  const notes: string[] = [];
  // Independent reads side by side (issue 17: wall time); the identity is needed unless the tree is unchanged.
  const [tree, baseTree, identity] = await Promise.all([
    git.text(['write-tree'], { env: index.env }),
    facts.headTree?.commit === facts.head
      ? facts.headTree.tree
      : git.text(['rev-parse', `${facts.head}^{tree}`]),
    identityEnv(git),
  ]);
  if (expectedTree !== undefined && tree !== expectedTree)
    throw new TreeChangedError(
      `the judge index now writes tree ${tree.slice(0, 12)}, not the verified tree ${expectedTree.slice(0, 12)}`,
    );
  let commit: string | null = null;
  if (tree !== baseTree) {
    commit = await git.text(['commit-tree', tree, '-p', facts.head, '-F', '-'], {
      stdin: message,
      env: identity,
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
  if (!(index.fromWorktreeIndex && (await installIndex(facts, index)))) await git.ok(['reset', '-q']);
  notes.push(...(await undoUnjudgedChanges(git, onlyChanged)));
  return { commit, notes };
}

/**
 * Makes the judge's index the repository's index, in place of `reset -q`. It holds exactly the
 * tree that was just committed (write-tree read it) and git's own stat data for every file, so
 * the result is what `reset -q` gives without re-reading every file. Done the way git writes its
 * index (an exclusive `index.lock`, then a rename): if anything holds the lock, `reset -q` runs.
 */
async function installIndex(facts: RepoFacts, index: JudgeIndex): Promise<boolean> {
  const target = join(facts.gitDir, 'index');
  const lock = `${target}.lock`;
  try {
    await copyFile(index.file, lock, constants.COPYFILE_EXCL);
  } catch {
    return false;
  }
  try {
    await rename(lock, target);
    return true;
  } catch {
    await rm(lock, { force: true });
    return false;
  }
}

/** Above this many paths the check after the commit walks the whole tree (argv stays small). */
const MAX_LISTED_PATHS = 500;

async function undoUnjudgedChanges(git: Git, onlyChanged?: readonly string[]): Promise<string[]> {
  const listed = onlyChanged && onlyChanged.length <= MAX_LISTED_PATHS ? onlyChanged : undefined;
  if (listed?.length === 0) return [];
  // One status walk gives both: tracked changes (restored from HEAD) and untracked files (removed).
  const entries = await worktreeStatus(git, listed);
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
  // One call for both keys: `-z` records are "key\nvalue"; the last one of a key wins, as in git.
  const found = new Map<string, string>();
  const listing = await git.run(['config', '-z', '--get-regexp', '^user\\.(name|email)$']);
  for (const record of splitNul(listing.stdout)) {
    const cut = record.indexOf('\n');
    if (cut > 0) found.set(record.slice(0, cut).toLowerCase(), record.slice(cut + 1).trim());
  }
  const name = found.get('user.name') ?? '';
  const email = found.get('user.email') ?? '';
  const env: Record<string, string> = {};
  if (!name && !process.env.GIT_AUTHOR_NAME) env.GIT_AUTHOR_NAME = env.GIT_COMMITTER_NAME = 'Relais';
  if (!email && !process.env.GIT_AUTHOR_EMAIL)
    env.GIT_AUTHOR_EMAIL = env.GIT_COMMITTER_EMAIL = 'relais@localhost';
  return env;
}
