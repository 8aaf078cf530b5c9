import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { runnerToolEnv } from '../workspace/tool-path.js';

/** Where a command would be found (a path, or a name looked up on PATH), or null. */
export async function findExecutable(
  command: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<string | null> {
  if (command.includes('/')) {
    const path = isAbsolute(command) ? command : resolve(cwd, command);
    return isExecutableFile(path) ? path : null;
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, command);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

/**
 * Synchronous on purpose (issue 17): two awaited calls per PATH folder cost about 0.4 ms each in
 * round trips, so finding bwrap in /usr/bin behind nine folders took 4 ms of a tick's start; the
 * same calls made directly take microseconds.
 */
function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path, { throwIfNoEntry: false })?.isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    // Unreadable (EACCES, ENOTDIR, a loop) or not executable: not this one.
    return false;
  }
}

/**
 * A tool the runner itself starts outside the sandbox (bwrap, gh): looked up only in PATH folders
 * outside the repository `root` (workspace/tool-path.ts says why), so the path found is absolute.
 */
export function findRunnerTool(
  command: string,
  env: NodeJS.ProcessEnv,
  root: string,
): Promise<string | null> {
  return findExecutable(command, runnerToolEnv(env, root), root);
}
