import { rmSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import type { Git } from './git.js';
import { LOOSE_OBJECT_NAME, looseObjectFiles } from './object-guard.js';
import { namesOrEmpty, statOrNull } from './stat-or-null.js';

/**
 * Every Relais git call runs with `gc.auto=0` (git.ts: an automatic gc would rewrite `.git` while a
 * builder is judged), so a loop's own commits never trigger git's packing, and nothing else does
 * while nobody commits by hand. Loose objects then grow by about five a tick (a blob, the trees
 * above it, the commit), and the object guard looks at each of them twice a tick (issue 17: the
 * judge's cost would grow with every tick ever run: about 14 µs a loose object a pass here).
 *
 * So after a tick that succeeded, outside the judged window and still under the lock, the runner
 * packs them when there are more than LOOSE_LIMIT, as git's `gc --auto` would at 6,700:
 * - the estimate is git's own: the entries of one fan-out folder (objects/17) times 256;
 * - `git pack-objects` packs exactly the loose objects listed (reachable or not; no history walk,
 *   so its cost follows the loose objects, not the repository), then `git prune-packed` deletes
 *   the loose copies now in the pack. Content, refs, index and work tree are unchanged: every
 *   object stays readable, from the pack. Neither takes a lock that could make it skip silently;
 * - only when this checkout is the repository's only one (no `worktrees/` entry in the common
 *   git folder): a parallel lane, or another Relais in a worktree of the user's, shares the
 *   object store and may be inside its judged window, where objects leaving their loose files
 *   would have to be read back in full (and a large enough set of them would fail that read);
 * - only with room for the pack: free space at least twice the loose objects' size, so a nearly
 *   full disk is not filled by it (a failed pack's temporary file is removed);
 * - only up to LOOSE_BYTES_LIMIT of loose data: packing is CPU-bound (a GB of large blobs takes
 *   git tens of seconds), and the tick's lock is held meanwhile; above it the objects stay loose
 *   for the user's own `git gc`, and the runner says so;
 * - `onStart` is told before git starts, so a slow pack is seen; an interrupt after the pack skips
 *   the prune (the loose copies then wait for the next pack or `git gc`).
 * - a later tick's guards take their baseline after this.
 * It never changes a verdict: any failure leaves the objects loose and is said as a warning.
 */
export const LOOSE_LIMIT = 1024;
export const LOOSE_BYTES_LIMIT = 256 * 1024 * 1024;

export interface Compaction {
  /** Loose objects: git's estimate, then the exact count when packing was tried. */
  readonly loose: number;
  /** Whether git packed them (false: below the limit, not the only checkout, or a failure). */
  readonly packed: boolean;
  /** Why a pack that was due was not made; null when none was due or it was made. */
  readonly detail: string | null;
}

export async function compactLooseObjects(
  git: Git,
  commonDir: string,
  { onStart = () => {}, signal }: { onStart?: (loose: number) => void; signal?: AbortSignal } = {},
): Promise<Compaction> {
  const objectsDir = join(commonDir, 'objects');
  const estimated = estimatedLooseObjects(objectsDir);
  if (estimated <= LOOSE_LIMIT || hasLinkedWorktrees(commonDir))
    return { loose: estimated, packed: false, detail: null };
  const loose = looseObjects(objectsDir);
  const mib = (bytes: number) => Math.ceil(bytes / 1024 / 1024);
  if (loose.bytes > LOOSE_BYTES_LIMIT)
    return {
      loose: loose.ids.length,
      packed: false,
      detail: `${mib(loose.bytes)} MiB is more than the runner packs (${mib(LOOSE_BYTES_LIMIT)} MiB); \`git gc\` packs them`,
    };
  const room = roomFor(objectsDir, loose.bytes);
  if (room) return { loose: loose.ids.length, packed: false, detail: room };
  onStart(loose.ids.length);
  const pack = await git.run(['pack-objects', '-q', '--non-empty', join(objectsDir, 'pack', 'pack')], {
    stdin: `${loose.ids.join('\n')}\n`,
  });
  if (pack.code !== 0) {
    removeTemporaryPack(objectsDir, pack.stderr);
    return {
      loose: loose.ids.length,
      packed: false,
      detail: `git pack-objects failed: ${firstLine(pack.stderr)}`,
    };
  }
  if (signal?.aborted) return { loose: loose.ids.length, packed: true, detail: null };
  const prune = await git.run(['prune-packed', '-q']);
  if (prune.code !== 0)
    return {
      loose: loose.ids.length,
      packed: false,
      detail: `git prune-packed failed: ${firstLine(prune.stderr)}`,
    };
  return { loose: loose.ids.length, packed: true, detail: null };
}

/** Git's estimate (`too_many_loose_objects`): loose objects in objects/17, times 256. */
export function estimatedLooseObjects(objectsDir: string): number {
  return namesOrEmpty(join(objectsDir, '17')).filter((name) => LOOSE_OBJECT_NAME.test(name)).length * 256;
}

/** A `worktrees/` entry in the common git folder: another checkout shares objects and refs. */
export function hasLinkedWorktrees(commonDir: string): boolean {
  return namesOrEmpty(join(commonDir, 'worktrees')).length > 0;
}

/** Every loose object's id and their total size on disk. */
function looseObjects(objectsDir: string): { ids: string[]; bytes: number } {
  const ids: string[] = [];
  let bytes = 0;
  for (const { id, path } of looseObjectFiles(objectsDir)) {
    const stat = statOrNull(path);
    // Gone meanwhile, or not a file (git would not read it as an object either).
    if (!stat?.isFile()) continue;
    ids.push(id);
    bytes += Number(stat.size);
  }
  return { ids, bytes };
}

/** Null when the filesystem has room for a pack of `bytes` twice over; otherwise why not. */
export function roomFor(objectsDir: string, bytes: number): string | null {
  let free: number;
  try {
    const fs = statfsSync(objectsDir);
    free = Number(fs.bavail) * Number(fs.bsize);
  } catch {
    return null;
  }
  return free >= 2 * bytes
    ? null
    : `only ${Math.floor(free / 1024 / 1024)} MiB free for ${Math.ceil(bytes / 1024 / 1024)} MiB of loose objects`;
}

/** pack-objects names its temporary file when it fails (a full disk): that file is removed. */
function removeTemporaryPack(objectsDir: string, stderr: string): void {
  for (const name of new Set(stderr.match(/tmp_(?:pack|idx|rev)_[A-Za-z0-9]+/g) ?? []))
    rmSync(join(objectsDir, 'pack', name), { force: true });
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0]?.slice(0, 200) ?? '';
}
