import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Git } from './git.js';
import type { JudgeIndex } from './touched-set.js';

/**
 * Issue 14 "The verdict is about the committed tree": the tree verification ran on must be the
 * tree the judge approved and the commit records. The judged tree is the judge index's; the tree
 * on disk is read into a copy of that index (`add -u` rehashes only files whose stat changed), so
 * it covers exactly the paths that get committed. Untracked files verification creates are not
 * part of any commit and are undone after it (commit.ts), so they do not count here.
 */

export async function judgedTree(git: Git, index: JudgeIndex): Promise<string> {
  return git.text(['write-tree'], { env: index.env });
}

/** The tree the worktree holds now for the judge index's paths. */
export async function treeOnDisk(git: Git, index: JudgeIndex): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'relais-verified-'));
  try {
    const copy = join(dir, 'index');
    await copyFile(index.file, copy);
    const env = { GIT_INDEX_FILE: copy };
    await git.ok(['add', '-u'], { env });
    return await git.text(['write-tree'], { env });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Thrown by the commit when the judge index no longer writes the tree that was verified. */
export class TreeChangedError extends Error {}
