import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Git } from './git.js';

/**
 * Every Relais git call runs with `gc.auto=0` (git.ts: an automatic gc would rewrite `.git` while a
 * builder is judged), so a loop's own commits never trigger git's packing, and nothing else does
 * while nobody commits by hand. Loose objects then grow by about five a tick (a blob, the trees
 * above it, the commit), and the object guard looks at each of them twice a tick (issue 17: the
 * judge's cost would grow with every tick ever run: about 14 µs a loose object a pass here).
 *
 * So after a tick that committed, outside the judged window and still under the lock, the runner
 * packs them when there are more than LOOSE_LIMIT, as git's `gc --auto` would at 6,700:
 * - the estimate is git's own: the entries of one fan-out folder (objects/17) times 256;
 * - `git maintenance run --task=loose-objects` packs every loose object, reachable or not (it does
 *   not walk history, so its cost follows the loose objects, not the repository), and
 *   `git prune-packed` then deletes the loose copies now in that pack. Content, refs, index and
 *   work tree are unchanged: every object stays readable, from the pack;
 * - a later tick's guards take their baseline after this; a parallel lane judged meanwhile sees
 *   loose objects leave and a pack arrive, which its object guard already accepts only after
 *   reading each of them back from git and verifying the new pack.
 * It never changes a verdict: a git without `maintenance` or a failed run leaves the objects loose.
 */
export const LOOSE_LIMIT = 1024;

export interface Compaction {
  /** Loose objects estimated before packing (git's estimate). */
  readonly estimated: number;
  /** Whether git packed them (false: below the limit, or git failed; `detail` says which). */
  readonly packed: boolean;
  readonly detail: string | null;
}

export async function compactLooseObjects(git: Git, commonDir: string): Promise<Compaction> {
  const estimated = estimatedLooseObjects(join(commonDir, 'objects'));
  if (estimated <= LOOSE_LIMIT) return { estimated, packed: false, detail: null };
  const pack = await git.run(['maintenance', 'run', '--task=loose-objects', '--quiet']);
  if (pack.code !== 0)
    return {
      estimated,
      packed: false,
      detail: `git maintenance failed: ${pack.stderr.trim().slice(0, 200)}`,
    };
  const prune = await git.run(['prune-packed', '--quiet']);
  if (prune.code !== 0)
    return {
      estimated,
      packed: false,
      detail: `git prune-packed failed: ${prune.stderr.trim().slice(0, 200)}`,
    };
  return { estimated, packed: true, detail: null };
}

/** Git's estimate (`too_many_loose_objects`): loose objects in objects/17, times 256. */
export function estimatedLooseObjects(objectsDir: string): number {
  let names: string[];
  try {
    names = readdirSync(join(objectsDir, '17'));
  } catch {
    return 0;
  }
  return names.filter((name) => /^[0-9a-f]{38}([0-9a-f]{24})?$/.test(name)).length * 256;
}
