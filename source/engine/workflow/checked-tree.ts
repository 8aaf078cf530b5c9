import { type Git, splitNul } from '../judge/git.js';
import { removeCreated } from '../judge/rollback.js';
import { fileStamps, rewrittenPaths, worktreeDiskIndex } from '../judge/verified-tree.js';

/**
 * Issue 14, "the verdict is about the committed tree", for the workflow's `single` engine: its
 * project checks run before its judge, so the tree they ran on is read from the worktree itself,
 * before and after them. What the checks created (a log, a cache that is not ignored) is their
 * side effect, not the agent's work: it is removed, as a tick undoes it after its commit. Any
 * other change while they ran (a file rewritten, even one put back, or removed) means what passed
 * is not what would be committed: the run stops (judged-run.ts refuses to commit another tree).
 */

export interface CheckedTree {
  /** The tree the checks ran on, as git would commit it. */
  readonly tree: string;
  /** What changed while the checks ran, or null when the tree held still. */
  readonly changedDuring: string | null;
  /** Files the checks created, removed afterwards. */
  readonly removed: readonly string[];
}

export async function checksOnHeldTree<T>(
  git: Git,
  gitDir: string,
  run: () => Promise<T>,
): Promise<{ result: T; checked: CheckedTree }> {
  const disk = await worktreeDiskIndex(git, gitDir);
  try {
    const untrackedBefore = new Set(await untracked(git));
    const before = await disk.tree();
    const stamps = await fileStamps(git, disk);
    const result = await run();
    const removed = (await untracked(git)).filter((path) => !untrackedBefore.has(path));
    await removeCreated(git.root, removed);
    const rewritten = rewrittenPaths(stamps, await fileStamps(git, disk));
    const after = await disk.tree();
    const changedDuring =
      rewritten.length > 0
        ? `rewritten while the checks ran: ${rewritten.slice(0, 5).join(', ')}`
        : after !== before
          ? `the tree on disk was ${short(before)} when the checks started and ${short(after)} when they ended`
          : null;
    return { result, checked: { tree: before, changedDuring, removed } };
  } finally {
    await disk.dispose();
  }
}

/** Untracked files git would commit (ignored ones left out). */
async function untracked(git: Git): Promise<string[]> {
  return splitNul(await git.ok(['ls-files', '--others', '--exclude-standard', '-z']));
}

const short = (tree: string) => tree.slice(0, 12);
