import { type Dirent, lstatSync, readdirSync, type Stats } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { type LinkFacts, linkFactsOf, type StatMemo } from './stat-or-null.js';

/**
 * Files git cannot see or judge by content, refused when the tick made them (issue 14):
 * - a hard link (a regular file with more than one link): its other name may be outside the
 *   repository, so the next tick's in-scope write would change that outside file, and rollback
 *   could not undo it;
 * - a FIFO, socket or device node: git ignores them, so they would survive SUCCESS and rollback,
 *   and a FIFO blocks whatever opens it next (the next tick's checks, the user's tools).
 * "Made by the tick" is read from the inode's change time, which link() and mknod() set and no
 * builder can set back: files that were already there before the tick are the user's own.
 */

export type UnsafeKind = 'hard link' | 'FIFO' | 'socket' | 'device node';

export interface UnsafeFile {
  /** Relative to the repository root, with `/`. */
  readonly path: string;
  readonly kind: UnsafeKind;
  readonly links: number;
}

export interface UnsafeWalkOptions {
  /** Ignored folders this judgement already walked, with their files' lstat (ignored-files.ts). */
  readonly walked?: StatMemo;
  /**
   * The tick's processes ran inside the OS sandbox (bwrap): only folders whose own ctime moved are
   * read file by file (`walkSandboxedTree`), plus the `changed` paths.
   */
  readonly sandboxed?: boolean;
  /**
   * Paths the judge saw change (repository-relative): lstat'ed as well by the sandboxed walk. A
   * write in place moves only the file's own ctime, not its folder's, so a file that already had a
   * second name before the tick (its folder unchanged) is found by the change itself.
   */
  readonly changed?: readonly string[];
  /**
   * With `sandboxed`: the repository paths the tick's processes could write (`writableInTree`,
   * folders end in `/`); only those are walked. Null or absent: the whole tree.
   */
  readonly within?: readonly string[] | null;
}

/**
 * Walks the worktree (not the repository's .git, not the runner workspace) for unsafe files made
 * since `sinceMs`. Synchronous on purpose: one readdir per folder and one lstat per file, tens of
 * thousands of them with nothing to overlap (the promise API cost several times the CPU).
 */
export async function findUnsafeFiles(
  root: string,
  workspaceDir: string,
  sinceMs: number,
  options: UnsafeWalkOptions = {},
): Promise<UnsafeFile[]> {
  const found: UnsafeFile[] = [];
  const since = Math.floor(sinceMs);
  const seen = new Set<string>();
  const visit = (path: string, facts: LinkFacts) => {
    if (facts.ctimeFloorMs < since || seen.has(path)) return;
    const kind = facts.special ?? (facts.isFile && facts.nlink > 1 ? 'hard link' : null);
    if (kind === null) return;
    seen.add(path);
    found.push({ path: rel(root, path), kind, links: facts.nlink });
  };
  if (options.sandboxed) {
    const walk = { skip: new Set([join(root, '.git'), workspaceDir]), since, walked: options.walked };
    if (options.within) walkWritable(root, options.within, walk, visit);
    else walkSandboxedTree(root, walk, visit);
    for (const path of options.changed ?? []) visitLstat(join(root, path), visit);
  } else walkFacts(root, workspaceDir, options.walked, visit);
  return found.sort((a, b) => a.path.localeCompare(b.path));
}

/** Calls `visit` with the lstat of every regular or special file below `dir`. */
function walkFacts(
  dir: string,
  workspaceDir: string,
  walked: StatMemo | undefined,
  visit: (path: string, facts: LinkFacts) => void,
): void {
  if (visitWalked(dir, walked, visit)) return;
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== '.git' && path !== workspaceDir) walkFacts(path, workspaceDir, walked, visit);
    } else if (entry.isFile() || specialKind(entry) !== null) visitLstat(path, visit);
  }
}

interface ChangedWalk {
  /** The repository's own .git and the runner workspace: read-only inside the sandbox. */
  readonly skip: ReadonlySet<string>;
  readonly since: number;
  readonly walked: StatMemo | undefined;
  /**
   * The root's device when its folders count their subfolders in their link count (a folder's
   * nlink is 2 plus its subfolders: ext4, xfs, tmpfs; not btrfs, whose folders say 1), checked on
   * the root's own listing; null when they do not, and every folder is then listed.
   */
  readonly leafDev: number | null;
}

/**
 * The walk when every writer ran in the sandbox (issue 17: the judge's cost follows the change,
 * not the repository). Only folders whose own ctime is not older than `since` are read file by
 * file; an unchanged folder is listed only to find its subfolders, and not at all when its link
 * count says it has none. Why that cannot miss an unsafe file the tick made:
 * - A new FIFO, socket, device node or hard link is a new name: mknod, link, symlink, rename and
 *   create all set the parent folder's ctime to now, and nothing sets it back (changing the clock
 *   takes root). So a folder whose ctime is older holds no name the tick made; a FIFO in it was
 *   the user's before the tick (the full walk would still refuse one whose mode changed).
 * - A file that already had a second name before the tick and is written now is a change the
 *   judge sees: the caller passes the changed paths (`changed`), and each is lstat'ed.
 * - An existing file that gains a link does not change its folder: only the new name's folder
 *   changes. Inside the sandbox both names are on one mount: each writable folder is its own bind
 *   mount, link(2) across mounts fails with EXDEV, and `.git/`, the workspace and the rest of the
 *   filesystem are read-only. So the new name is in the tree, in a folder whose ctime moved, and it
 *   is found there (same inode, so the same link count and ctime). Nested `.git` folders (a
 *   submodule's, a clone the builder made) are writable when their folder is, so this walk reads
 *   them too (the full walk skips them, and catches such a link by the file's other name).
 * - Nothing writes while it walks: the sandboxed processes are gone (bwrap's PID namespace ends
 *   with its init, and the runner sweeps whatever still carries the call's mark).
 * Without the sandbox an outside name is possible (`ln src/a.ts ~/x`), so the full walk runs. The
 * sandbox's known gap (a host socket reaching a process outside it, docs/sandbox.md) could give an
 * unchanged file an outside name unseen here; such a process could as well write that outside file
 * itself, which is what refusing the link protects.
 */
function walkSandboxedTree(
  /** The repository's root, or a writable folder in it (`walkWritable`). */
  root: string,
  walk: Omit<ChangedWalk, 'leafDev'>,
  visit: (path: string, facts: LinkFacts) => void,
): void {
  const own = lstatSync(root, { throwIfNoEntry: false });
  const entries = listOrNull(root);
  if (entries === null) return;
  const subfolders = entries.filter((entry) => entry.isDirectory()).length;
  const leafDev = own !== undefined && own.nlink === 2 + subfolders ? own.dev : null;
  visitEntries(root, entries, changedSince(own, walk.since), { ...walk, leafDev }, visit);
}

/**
 * The sandboxed walk of only the paths the tick could write (issue 17): each writable folder as
 * `walkSandboxedTree` walks the root, and each writable file (a driver's result file) lstat'ed.
 * Why nothing outside them can hold an unsafe file the tick made: making a name (create, mknod,
 * link, rename) writes its folder, and every folder outside them is on a read-only mount inside
 * the sandbox (EROFS); a hard link's new name is on its file's mount (EXDEV across mounts), which
 * is one of these folders. A folder nested in another listed one is walked with it, once.
 */
function walkWritable(
  root: string,
  within: readonly string[],
  walk: Omit<ChangedWalk, 'leafDev'>,
  visit: (path: string, facts: LinkFacts) => void,
): void {
  const folders = within.filter((path) => path.endsWith('/'));
  for (const path of within) {
    const nested = folders.some((folder) => folder !== path && path.startsWith(folder));
    if (nested) continue;
    // join keeps a trailing `/`, which the walk's own paths (and the memo's keys) do not have.
    const abs = join(root, path.endsWith('/') ? path.slice(0, -1) : path);
    if (!path.endsWith('/')) visitLstat(abs, visit);
    else if (!walk.skip.has(abs) && !visitWalked(abs, walk.walked, visit))
      walkSandboxedTree(abs, walk, visit);
  }
}

function walkChangedFolder(
  dir: string,
  walk: ChangedWalk,
  visit: (path: string, facts: LinkFacts) => void,
): void {
  if (visitWalked(dir, walk.walked, visit)) return;
  const own = lstatSync(dir, { throwIfNoEntry: false });
  const changed = changedSince(own, walk.since);
  // Unchanged and no subfolder: nothing new here and nothing below.
  if (!changed && own !== undefined && own.dev === walk.leafDev && own.nlink === 2) return;
  const entries = listOrNull(dir);
  if (entries !== null) visitEntries(dir, entries, changed, walk, visit);
}

function visitEntries(
  dir: string,
  entries: readonly Dirent[],
  changed: boolean,
  walk: ChangedWalk,
  visit: (path: string, facts: LinkFacts) => void,
): void {
  for (const entry of entries) {
    const path = `${dir}${sep}${entry.name}`;
    if (entry.isDirectory()) {
      if (!walk.skip.has(path)) walkChangedFolder(path, walk, visit);
    } else if (changed && (entry.isFile() || specialKind(entry) !== null)) visitLstat(path, visit);
  }
}

/** A folder that cannot be stat'ed counts as changed. */
function changedSince(own: Stats | undefined, since: number): boolean {
  return own === undefined || Math.floor(own.ctimeMs) >= since;
}

function listOrNull(dir: string): Dirent[] | null {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return null;
  }
}

/** A folder the ignored walk already read in full: its entries as a readdir here would give them. */
function visitWalked(
  dir: string,
  walked: StatMemo | undefined,
  visit: (path: string, facts: LinkFacts) => void,
): boolean {
  const known = walked?.get(dir);
  if (!known) return false;
  // Nested .git folders skipped as the full walk does.
  for (const [path, facts] of known) if (!path.includes(`${sep}.git${sep}`)) visit(path, facts);
  return true;
}

function visitLstat(path: string, visit: (path: string, facts: LinkFacts) => void): void {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (stat) visit(path, linkFactsOf(stat));
}

export function describeUnsafe(file: UnsafeFile): string {
  return file.kind === 'hard link'
    ? `hard link: ${file.path} shares its content with ${file.links - 1} other name(s), possibly outside the repository`
    : `${file.kind} in the tree: ${file.path}`;
}

/**
 * Removes the tick's unsafe files by name, before a rollback: unlinking the repository's name of a
 * hard link never touches the other name, and `reset --hard` then writes a fresh file of its own.
 */
export async function removeUnsafeFiles(root: string, files: readonly UnsafeFile[]): Promise<string[]> {
  const notes: string[] = [];
  for (const file of files) {
    await rm(join(root, file.path), { force: true });
    notes.push(`removed ${file.kind} ${file.path} made by the tick`);
  }
  return notes;
}

function specialKind(entry: Dirent): UnsafeKind | null {
  if (entry.isFIFO()) return 'FIFO';
  if (entry.isSocket()) return 'socket';
  if (entry.isCharacterDevice() || entry.isBlockDevice()) return 'device node';
  return null;
}

function rel(root: string, path: string): string {
  return relative(root, path).split(sep).join('/');
}
