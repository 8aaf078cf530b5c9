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

/**
 * Walks the worktree (not .git folders, not the runner workspace) for unsafe files made since
 * `sinceMs`. Synchronous on purpose: one readdir per folder and one lstat per file, tens of
 * thousands of them with nothing to overlap (the promise API cost several times the CPU).
 */
export async function findUnsafeFiles(
  root: string,
  workspaceDir: string,
  sinceMs: number,
  /** Ignored folders this judgement already walked, with their files' lstat (ignored-files.ts). */
  walked?: StatMemo,
): Promise<UnsafeFile[]> {
  const found: UnsafeFile[] = [];
  const since = Math.floor(sinceMs);
  walkFacts(root, workspaceDir, walked, (path, facts) => {
    if (facts.ctimeFloorMs < since) return;
    const kind = facts.special ?? (facts.isFile && facts.nlink > 1 ? 'hard link' : null);
    if (kind !== null) found.push({ path: rel(root, path), kind, links: facts.nlink });
  });
  return found.sort((a, b) => a.path.localeCompare(b.path));
}

/** Calls `visit` with the lstat of every regular or special file below `dir`. */
function walkFacts(
  dir: string,
  workspaceDir: string,
  walked: StatMemo | undefined,
  visit: (path: string, facts: LinkFacts) => void,
): void {
  const known = walked?.get(dir);
  if (known) {
    // The entries a readdir here would give, read moments ago (nested .git folders skipped as below).
    for (const [path, facts] of known) if (!path.includes(`${sep}.git${sep}`)) visit(path, facts);
    return;
  }
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
    } else if (entry.isFile() || specialKind(entry) !== null) {
      const stat = lstatSync(path, { throwIfNoEntry: false });
      if (stat) visit(path, linkFactsOf(stat));
    }
  }
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
