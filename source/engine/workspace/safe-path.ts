import { lstat, readlink, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';

/**
 * Where a path really leads once every symlink is followed, for paths that may not exist yet:
 * the deepest existing ancestor is resolved with realpath and the rest is appended. A path is
 * "under the root" only if that real location is inside the real root.
 */
export async function realLocation(path: string): Promise<string> {
  let existing = resolve(path);
  const rest: string[] = [];
  for (;;) {
    try {
      const real = await realpath(existing);
      return rest.length > 0 ? resolve(real, ...rest.reverse()) : real;
    } catch {
      const parent = dirname(existing);
      if (parent === existing) return resolve(path);
      rest.push(existing.slice(parent.length + (parent.endsWith(sep) ? 0 : 1)));
      existing = parent;
    }
  }
}

export function isInsideDir(child: string, dir: string): boolean {
  const rel = relative(dir, child);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

export async function resolvesUnderRoot(root: string, path: string): Promise<boolean> {
  const realRoot = await realpath(root);
  return isInsideDir(await realLocation(resolve(root, path)), realRoot);
}

/**
 * For a repo-relative path that is a symlink: the real location of its target, or null when the
 * path is not a symlink. Used to catch links that point out of the repository (or into .git).
 */
export async function symlinkTarget(root: string, relPath: string): Promise<string | null> {
  const full = resolve(root, relPath);
  const stat = await lstat(full).catch(() => null);
  if (!stat?.isSymbolicLink()) return null;
  const target = await readlink(full);
  return realLocation(resolve(dirname(full), target));
}
