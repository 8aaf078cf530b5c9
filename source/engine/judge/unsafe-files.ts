import { type Dirent, lstatSync, readdirSync } from 'node:fs';
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
   * Every process that could write the tree since `sinceMs` ran inside the OS sandbox (bwrap).
   * Then only folders whose own ctime moved are read file by file (`walkChangedFolders`).
   */
  readonly sandboxed?: boolean;
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
  const visit = (path: string, facts: LinkFacts) => {
    if (facts.ctimeFloorMs < since) return;
    const kind = facts.special ?? (facts.isFile && facts.nlink > 1 ? 'hard link' : null);
    if (kind !== null) found.push({ path: rel(root, path), kind, links: facts.nlink });
  };
  if (options.sandboxed) {
    walkChangedFolders(
      root,
      { skip: new Set([join(root, '.git'), workspaceDir]), since, walked: options.walked },
      visit,
    );
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
}

/**
 * The walk when every writer ran in the sandbox (issue 17: the judge's cost follows the change).
 * Every folder is still read (readdir, no per-file lstat), but regular files are lstat'ed only in
 * folders whose own ctime is not older than `since`. Why that cannot miss an unsafe file the tick
 * made:
 * - A new FIFO, socket, device node or hard link is a new name: mknod, link, symlink, rename and
 *   create all set the parent folder's ctime to now, and nothing sets it back (changing the clock
 *   takes root), so the folder holding the new name is read in full. FIFOs, sockets and devices
 *   are also lstat'ed wherever readdir finds them (rare, and it keeps the old rule exactly: one
 *   whose own ctime moved is refused even in an unchanged folder).
 * - An existing file that gains a link does not change its folder: only the new name's folder
 *   changes. Inside the sandbox both names are on one mount: each writable folder is its own bind
 *   mount, link(2) across mounts fails with EXDEV, and `.git/`, the workspace and the rest of the
 *   filesystem are read-only. So the new name is in the tree, in a folder whose ctime moved, and it
 *   is found there (same inode, so the same link count and ctime). Nested `.git` folders (a
 *   submodule's, a clone the builder made) are writable when their folder is, so this walk reads
 *   them too (the full walk skips them, and catches such a link by the file's other name).
 * Without the sandbox an outside name is possible (`ln src/a.ts ~/x`), so the full walk runs.
 */
function walkChangedFolders(
  dir: string,
  walk: ChangedWalk,
  visit: (path: string, facts: LinkFacts) => void,
): void {
  if (visitWalked(dir, walk.walked, visit)) return;
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  // After the listing: a name created since the folder was stat'ed would otherwise be listed
  // under an old ctime. A folder that cannot be stat'ed counts as changed.
  const own = lstatSync(dir, { throwIfNoEntry: false });
  const changed = own === undefined || Math.floor(own.ctimeMs) >= walk.since;
  for (const entry of entries) {
    const path = `${dir}${sep}${entry.name}`;
    if (entry.isDirectory()) {
      if (!walk.skip.has(path)) walkChangedFolders(path, walk, visit);
    } else if (specialKind(entry) !== null || (changed && entry.isFile())) visitLstat(path, visit);
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
