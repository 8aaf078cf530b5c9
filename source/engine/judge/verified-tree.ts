import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scratchPrefix } from '../sandbox/leftover-scratch.js';
import { type Git, splitNul } from './git.js';
import { statOrNull } from './stat-or-null.js';
import type { JudgeIndex } from './touched-set.js';

/**
 * Issue 14 "The verdict is about the committed tree": the tree verification ran on must be the
 * tree the judge approved and the commit records. The judged tree is the judge index's; the tree
 * on disk is read into a copy of that index (`add -u` rehashes only files whose stat changed), so
 * it covers exactly the paths that get committed (diskIndex). Untracked files verification creates are not
 * part of any commit and are undone after it (commit.ts), so they do not count here.
 */

export async function judgedTree(git: Git, index: JudgeIndex): Promise<string> {
  return git.text(['write-tree'], { env: index.env });
}

/**
 * A private copy of the judge index that reads the tree on disk: the first read hashes every
 * file, later reads reuse the stat data it recorded and rehash only files whose stat changed.
 */
export interface DiskIndex {
  /** The copy's environment (GIT_INDEX_FILE), for fileStamps. */
  readonly env: Record<string, string>;
  tree(): Promise<string>;
  dispose(): Promise<void>;
}

export function diskIndex(git: Git, index: JudgeIndex): Promise<DiskIndex> {
  return diskIndexFrom(git, index.file, ['add', '-u']);
}

/**
 * The whole worktree as git would commit it (tracked files and new ones, ignored ones left out),
 * read into a copy of the repository's own index: the tree the workflow's checks ran on, where no
 * judge index exists yet (the `single` engine verifies before its judge runs).
 */
export function worktreeDiskIndex(git: Git, gitDir: string): Promise<DiskIndex> {
  return diskIndexFrom(git, join(gitDir, 'index'), ['add', '-A']);
}

async function diskIndexFrom(git: Git, source: string, add: readonly string[]): Promise<DiskIndex> {
  const dir = await mkdtemp(join(tmpdir(), scratchPrefix('verified')));
  const copy = join(dir, 'index');
  const env = { GIT_INDEX_FILE: copy };
  try {
    await copyFile(source, copy);
  } catch {
    // No index yet (a fresh clone never checked out): start from HEAD, hashing every file once.
    await git.ok(['read-tree', 'HEAD'], { env });
  }
  return {
    env,
    async tree() {
      await git.ok([...add], { env });
      return git.text(['write-tree'], { env });
    },
    dispose: () => rm(dir, { recursive: true, force: true }),
  };
}

/**
 * A file rewritten during verification and put back before it ended has the judged content again,
 * yet the checks ran on other bytes. Its inode change time gives it away (no builder can set a
 * change time back): every path the commit records is stamped before and after.
 */
export async function fileStamps(git: Git, index: Pick<JudgeIndex, 'env'>): Promise<Map<string, string>> {
  const stamps = new Map<string, string>();
  for (const path of splitNul(await git.ok(['ls-files', '-z'], { env: index.env }))) {
    // Synchronous on purpose: one lstat per committed path, thousands of them, nothing to overlap.
    const stat = statOrNull(join(git.root, path));
    stamps.set(path, stat ? `${stat.ino}:${stat.ctimeNs}:${stat.size}` : 'missing');
  }
  return stamps;
}

export function rewrittenPaths(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
): string[] {
  return [...before].filter(([path, stamp]) => after.get(path) !== stamp).map(([path]) => path);
}

/** Thrown by the commit when the judge index no longer writes the tree that was verified. */
export class TreeChangedError extends Error {}
