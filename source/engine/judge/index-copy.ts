import { readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The repository's index as it was right before BUILD, kept in memory (a few MB even at 100k
 * files). After the build the judge writes it to a fresh temporary file and asks git about the
 * worktree through it: its stat data lets `git status` skip the files the build did not touch,
 * and its cache-tree lets `write-tree` rebuild only the folders that changed. Kept in memory, not
 * on disk, so nothing the builder runs can edit it; `.git/index` itself may have been rewritten by
 * the builder and is never trusted after BUILD.
 */

export interface IndexCopy {
  readonly bytes: Buffer;
  /** The index file's mtime: git's racy-entry check compares entry mtimes with it. */
  readonly mtimeMs: number;
}

/** Null when git would need more than the one file (a split index) or there is no index yet. */
export async function keepIndexCopy(gitDir: string): Promise<IndexCopy | null> {
  // A split index names a shared index beside .git/index; a copy elsewhere would not find it.
  const names = await readdir(gitDir).catch(() => [] as string[]);
  if (names.some((n) => n.startsWith('sharedindex.'))) return null;
  const file = join(gitDir, 'index');
  try {
    const [info, bytes] = await Promise.all([stat(file), readFile(file)]);
    if (info.size !== bytes.length) return null;
    return { bytes, mtimeMs: info.mtimeMs };
  } catch {
    return null;
  }
}

/**
 * Writes the copy to `path` with the original's mtime, rounded down: git treats an entry whose
 * mtime is not older than the index file as "racily clean" and compares its content, so an
 * earlier (never later) timestamp can only make git look at more files, not fewer.
 */
export async function writeIndexCopy(copy: IndexCopy, path: string): Promise<void> {
  await writeFile(path, copy.bytes, { mode: 0o600 });
  const seconds = Math.floor(copy.mtimeMs) / 1000;
  await utimes(path, seconds, seconds);
}
