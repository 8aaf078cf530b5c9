import { type Dirent, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { hasLinkedWorktrees } from './compact-objects.js';
import type { Git } from './git.js';
import { statOrNull } from './stat-or-null.js';

/**
 * Loose refs are the other thing git's gc tidies (`git pack-refs --all`) that Relais, running git
 * with `gc.auto=0`, would otherwise leave growing: tags and fetched branches written one file
 * each. The refs guard (refs-guard.ts) reads every ref file before each BUILD, so a STOP can put
 * it back: 10,000 loose tags cost a tick about 0.2 s of CPU, every tick (issue 17).
 *
 * So after a tick that succeeded, with its reports written and the lock still held (as for loose
 * objects, compact-objects.ts), the runner packs them once there are more than LOOSE_REFS_LIMIT:
 * - `git pack-refs --all --prune` is the step `git gc` runs: every ref keeps its name and value,
 *   moved from its own file into `packed-refs`, which the guard then reads in one go. Git locks
 *   each ref it prunes, so one written meanwhile stays loose; a ref file git cannot read (garbage),
 *   a symbolic ref and a ref to a missing object are left where they are (past the limit of
 *   those, a warning says so);
 * - only when this checkout is the repository's only one: a parallel lane shares the refs and
 *   may be inside its judged window, where refs leaving their files would read as the lane's
 *   change;
 * - not when anything below `refs/` is neither a file nor a folder: git reads every ref file it
 *   packs, and a FIFO would block it with the runner's lock held (a warning says which);
 * - not with a reftable (no loose ref files: the count finds none);
 * - the count skips what git's own listing skips (names starting with `.`, `.lock` files) and
 *   stops at the limit: a repository with a few refs pays a few folder reads.
 * It never changes a verdict: a failure leaves the refs loose and is said as a warning.
 */
export const LOOSE_REFS_LIMIT = 1024;

export interface RefCompaction {
  /** Loose ref files counted, up to LOOSE_REFS_LIMIT + 1. */
  readonly loose: number;
  readonly packed: boolean;
  /** Loose ref files left after a pack (git does not pack every kind); null when none was made. */
  readonly left: number | null;
  /** Why a pack that was due was not made; null when none was due or it was made. */
  readonly detail: string | null;
}

export async function compactLooseRefs(
  git: Git,
  commonDir: string,
  { onStart = () => {} }: { onStart?: () => void } = {},
): Promise<RefCompaction> {
  const refsDir = join(commonDir, 'refs');
  const loose = countLooseRefs(refsDir, LOOSE_REFS_LIMIT + 1);
  if (loose <= LOOSE_REFS_LIMIT || hasLinkedWorktrees(commonDir))
    return { loose, packed: false, left: null, detail: null };
  // Git opens every ref file to pack it and would wait forever on a FIFO (its reads block), with
  // the runner's lock held: only a tree of plain files and folders is packed.
  const odd = firstOddEntry(refsDir);
  if (odd !== null)
    return { loose, packed: false, left: null, detail: `${odd} is neither a file nor a folder` };
  onStart();
  const pack = await git.run(['pack-refs', '--all', '--prune']);
  if (pack.code !== 0) {
    const why = pack.stderr.trim().split('\n')[0]?.slice(0, 200) ?? '';
    return { loose, packed: false, left: null, detail: `git pack-refs failed: ${why}` };
  }
  // Git leaves some loose for good (a ref to a missing object, a symbolic or per-worktree ref,
  // garbage, a file it could not remove): said, not called packed. Without a record of them the
  // next tick tries again (git rewrites packed-refs, about what reading them costs the guard).
  const left = countLooseRefs(refsDir, Number.POSITIVE_INFINITY);
  return { loose, packed: true, left, detail: null };
}

/**
 * Files below `refsDir` that git reads as loose refs, counted until `stop`: as git's own listing,
 * not names starting with `.` or ending in `.lock` (a lock, a stray editor file), which it never
 * packs. Symbolic links are not followed.
 */
export function countLooseRefs(refsDir: string, stop: number): number {
  let count = 0;
  walkRefs(refsDir, (entry) => {
    if (entry.isDirectory() || entry.name.startsWith('.') || entry.name.endsWith('.lock')) return true;
    return ++count < stop;
  });
  return count;
}

/** The first entry below `refsDir` that is neither a regular file nor a folder (a FIFO, a link). */
function firstOddEntry(refsDir: string): string | null {
  let odd: string | null = null;
  walkRefs(refsDir, (entry, dir) => {
    if (entry.isFile() || entry.isDirectory()) return true;
    odd = join(dir, entry.name);
    return false;
  });
  return odd;
}

/** Every entry below `refsDir` (folders first listed, then entered), until `visit` says false. */
function walkRefs(refsDir: string, visit: (entry: Dirent, dir: string) => boolean): void {
  if (!statOrNull(refsDir)?.isDirectory()) return;
  const pending = [refsDir];
  while (pending.length > 0) {
    const dir = pending.pop() as string;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (!visit(entry, dir)) return;
      if (entry.isDirectory()) pending.push(join(dir, entry.name));
    }
  }
}
