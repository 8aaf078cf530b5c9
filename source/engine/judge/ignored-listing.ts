import { lstat } from 'node:fs/promises';

/**
 * Issue 17: the ignored listing after BUILD rides on the judge's own `git status --porcelain=v2
 * --untracked-files=all --ignored=matching` pass (touched-set.ts) instead of walking every folder
 * of the worktree a second time with `git ls-files --others --ignored --directory`.
 *
 * The snapshot before BUILD keeps the ls-files form, and the two forms are not the same:
 * - ls-files lists a folder as `folder/` when nothing inside it is untracked and not ignored, and
 *   also when it holds no file at all (an empty folder, only FIFOs);
 * - `--ignored=matching` lists a folder as `folder/` only when the folder itself matches an ignore
 *   pattern (then git does not look inside: nothing in it can be re-included, gitignore(5)), empty
 *   or not; a folder that does not match but holds only ignored files (`logs/` beside `*.log`) is
 *   listed file by file, recursively.
 * Both come from the same walk of git's (dir.c) with the same ignore rules and the same index (the
 * judge's is the one the snapshot was taken with), and differ only in that grouping. So, with the
 * snapshot in ls-files form:
 * - a path the snapshot listed and the status lists too is judged exactly as before;
 * - a path listed inside a folder the snapshot listed whole (a folder that matches no pattern and
 *   held only ignored files): that folder is judged whole, as the snapshot has it, provided git
 *   shows nothing changed or untracked inside it (still wholly ignored, so ls-files lists it whole
 *   too, unless an empty folder was made in it: then ls-files listed its files one by one and
 *   called every one of them "created"; judged whole, each is compared with the snapshot);
 * - git shows something changed or untracked inside a folder the snapshot listed whole, or a folder
 *   listed now holds a path the snapshot listed (the ignore rules changed): the forms cannot be
 *   matched, and the judge asks ls-files, as before;
 * - a folder the snapshot listed whole that nothing is listed in now, and that is still a folder,
 *   matches no pattern (`matching` lists every ignored folder that does) and holds no file git
 *   shows: it is walked, and a file deleted from it is reported (ls-files no longer listed such a
 *   folder, so those deletions were missed);
 * - a path listed now and not before (nor inside or over anything listed before) is new: every
 *   file below it is judged created, however git groups it. Only what git never lists (FIFOs,
 *   sockets, empty folders) can differ there, and the unsafe-files check refuses any of those the
 *   tick made; and a new folder reports at most 10,000 created files per listed folder either way,
 *   so a coarser grouping can report fewer past that (far past any files-touched limit: the tick
 *   stops on the count all the same).
 * Where the forms differ without this seeing it (a folder the snapshot listed file by file that
 * only now holds nothing but ignored files), ls-files named every file in it "created"; the status
 * lists them one by one and each is compared with the snapshot: an unchanged file is no longer
 * reported, a changed one still is. So the judgement differs from ls-files' only where ls-files
 * reported an unchanged file as created or missed a deletion; it never reports less of a change.
 */

/** The paths of the judge's status pass (touched-set.ts). */
export interface StatusListing {
  /** Changed and untracked paths (records `1`, `u`, `?`). */
  readonly changed: readonly string[];
  /** Ignored paths (records `!`). */
  readonly ignored: readonly string[];
}

/**
 * The ignored listing in the snapshot's form, from the status pass (`outermost` already applied to
 * `ignored`); null when the forms cannot be matched and ls-files must be asked.
 */
export function ignoredNow(
  listed: readonly string[],
  changed: readonly string[],
  beforeEntries: Iterable<string>,
): string[] | null {
  const before = [...beforeEntries];
  const beforeFolders = new Set(before.filter((p) => p.endsWith('/')));
  const listedFolders = new Set(listed.filter((p) => p.endsWith('/')));
  // Something git shows as changed or untracked inside a folder the snapshot listed whole: the
  // folder is no longer wholly ignored, and ls-files would list what is ignored in it one by one.
  if (beforeFolders.size > 0 && changed.some((p) => folderAbove(p, beforeFolders) !== null)) return null;
  // A folder listed now over a path the snapshot listed: only the ignore rules changing does that.
  if (listedFolders.size > 0 && before.some((p) => folderAbove(p, listedFolders) !== null)) return null;
  const now = new Set<string>();
  for (const path of listed) now.add(folderAbove(path, beforeFolders) ?? path);
  return [...now];
}

/** The outermost of `folders` that holds `path` (never `path` itself), or null. */
function folderAbove(path: string, folders: ReadonlySet<string>): string | null {
  if (folders.size === 0) return null;
  for (let at = path.indexOf('/'); at >= 0 && at < path.length - 1; at = path.indexOf('/', at + 1)) {
    const folder = path.slice(0, at + 1);
    if (folders.has(folder)) return folder;
  }
  return null;
}

export async function isFolder(path: string): Promise<boolean> {
  const stat = await lstat(path).catch(() => null);
  return stat?.isDirectory() === true;
}
