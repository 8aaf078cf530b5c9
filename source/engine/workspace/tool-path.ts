import { realpathSync } from 'node:fs';
import { delimiter, isAbsolute, relative } from 'node:path';

/**
 * The PATH the runner's own tools (git, gh, bwrap) are looked up on and run with: the caller's,
 * without any folder a builder or a verification can write in. A relative entry (`node_modules/.bin`,
 * or an empty one, which means the current folder) resolves against the child's working folder,
 * the repository; an absolute entry inside the repository (direnv's `$PWD/node_modules/.bin`) is
 * the same folder by name. Either way a program planted there would run outside the sandbox, as
 * the runner, every time it calls git. The agents and verification commands keep the whole PATH:
 * they run inside the sandbox, where what they start is fenced.
 */
export function pathOutside(path: string | undefined, root: string): string | undefined {
  if (path === undefined) return undefined;
  const roots = [root, real(root)];
  return path
    .split(delimiter)
    .filter((dir) => dir !== '' && isAbsolute(dir))
    .filter((dir) => !roots.some((r) => within(dir, r) || within(real(dir), r)))
    .join(delimiter);
}

/** The environment for a runner tool started outside the sandbox: PATH as `pathOutside` makes it. */
export function runnerToolEnv(env: NodeJS.ProcessEnv, root: string): NodeJS.ProcessEnv {
  return env.PATH === undefined ? { ...env } : { ...env, PATH: pathOutside(env.PATH, root) };
}

function within(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

function real(path: string): string {
  try {
    // The C library's realpath: one call, where the JavaScript one lstats every component.
    return realpathSync.native(path);
  } catch {
    return path;
  }
}
