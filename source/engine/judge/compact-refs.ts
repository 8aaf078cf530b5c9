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
 * - not with a reftable (no loose ref files: the count finds none);
 * - the count stops at the limit: a repository with a few refs pays a few folder reads.
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
  onStart();
  const pack = await git.run(['pack-refs', '--all', '--prune']);
  if (pack.code !== 0) {
    const why = pack.stderr.trim().split('\n')[0]?.slice(0, 200) ?? '';
    return { loose, packed: false, left: null, detail: `git pack-refs failed: ${why}` };
  }
  // Git leaves some loose for good (a ref to a missing object, a symbolic or per-worktree ref,
  // garbage): said, not called packed. Without a record of them the next tick tries again (git
  // rewrites packed-refs, about what reading those files costs the guard anyway).
  const left = countLooseRefs(refsDir, Number.POSITIVE_INFINITY);
  return { loose, packed: true, left, detail: null };
}

/** Files below `refsDir`, counted until `stop` (symlinks and other entries count as files too). */
export function countLooseRefs(refsDir: string, stop: number): number {
  if (!statOrNull(refsDir)?.isDirectory()) return 0;
  let count = 0;
  const pending = [refsDir];
  while (pending.length > 0 && count < stop) {
    const dir = pending.pop() as string;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (entry.isDirectory()) pending.push(join(dir, entry.name));
      else if (++count >= stop) break;
    }
  }
  return count;
}
