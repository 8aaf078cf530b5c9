import { existsSync, lstatSync, mkdirSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';

/**
 * bwrap binds whole paths, not globs: each allowed glob is reduced to its static prefix (`src/**`
 * -> `src`, `docs/*.md` -> `docs`, `**` -> the root), widened to the nearest folder that exists
 * (a new file's parent), resolved through symlinks and kept only when it stays inside the
 * repository. The sandbox is the first fence and may be wider than the glob; the judge, which
 * matches the real globs afterwards, stays the second.
 *
 * Folders only: a file bind mount cannot be replaced by rename(2) (EBUSY), and editors save files
 * by writing a temporary file and renaming it over the original.
 */
export function writableDirsForGlobs(
  root: string,
  globs: readonly string[],
  excluded: readonly string[],
  /** False: a prefix that is not an existing folder gives nothing (never its parent). */
  widen = true,
): string[] {
  const realRoot = realpathSync(root);
  const dirs: string[] = [];
  for (const glob of globs) {
    // A negated glob takes paths away in micromatch; it never makes anything writable.
    if (glob.startsWith('!')) continue;
    const prefix = staticPrefix(glob);
    if (!widen && !isDir(prefix ? join(realRoot, prefix) : realRoot)) continue;
    const dir = existingDirFor(realRoot, prefix);
    if (dir === null) continue;
    if (excluded.some((ex) => dir === ex || isInside(ex, dir))) continue;
    dirs.push(dir);
  }
  return outermost(dirs);
}

/** Path segments before the first one holding a glob character (`*?[]{}()!+@`), or a leading `!`. */
export function staticPrefix(glob: string): string {
  if (glob.startsWith('!')) return '';
  const kept: string[] = [];
  for (const segment of glob.split('/')) {
    if (/[*?[\]{}()!+@]/.test(segment)) break;
    kept.push(segment);
  }
  return kept.filter((s) => s !== '' && s !== '.').join('/');
}

function existingDirFor(realRoot: string, prefix: string): string | null {
  if (prefix.split('/').includes('..')) return null;
  let path = prefix ? join(realRoot, prefix) : realRoot;
  while (!isDir(path)) {
    if (path === realRoot || !isInside(realRoot, path)) return null;
    path = dirname(path);
  }
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return null;
  }
  // A symlinked folder pointing out of the repository is never made writable.
  return real === realRoot || isInside(realRoot, real) ? real : null;
}

function isDir(path: string): boolean {
  try {
    return existsSync(path) && statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export function isInside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel);
}

/** Drops folders already inside another one, and duplicates. */
export function outermost(dirs: readonly string[]): string[] {
  const unique = [...new Set(dirs)].sort();
  return unique.filter((dir) => !unique.some((other) => other !== dir && isInside(other, dir)));
}

/**
 * Makes the configured cache folders (`sandbox.verification_writable`) that do not exist yet, so a
 * tool's first run can write there (cargo's `target/` before the first build): only the last
 * folder of a glob's static prefix, only when its parent is a real folder (not a symlink) inside
 * the repository and outside the read-only paths. An empty folder is invisible to git, and
 * what a check writes in it is judged like any other change.
 */
export function makeMissingCacheFolders(
  root: string,
  globs: readonly string[],
  readOnly: readonly string[],
): void {
  const realRoot = realpathSync(root);
  for (const glob of globs) {
    const prefix = staticPrefix(glob);
    if (!prefix || prefix.split('/').includes('..')) continue;
    const path = join(realRoot, prefix);
    const parent = dirname(path);
    if (existsSync(path) || !isRealDir(parent)) continue;
    if (parent !== realRoot && !isInside(realRoot, realpathSync(parent))) continue;
    if (readOnly.some((ro) => path === ro || isInside(ro, path))) continue;
    try {
      mkdirSync(path);
    } catch {
      // Made meanwhile, or not makeable: the folder is then left out, as before.
    }
  }
}

function isRealDir(path: string): boolean {
  try {
    const stat = lstatSync(path);
    return stat.isDirectory() && !stat.isSymbolicLink();
  } catch {
    return false;
  }
}
