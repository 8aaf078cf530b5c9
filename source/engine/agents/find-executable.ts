import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
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
    return (await isExecutableFile(path)) ? path : null;
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, command);
    if (await isExecutableFile(candidate)) return candidate;
  }
  return null;
}

async function isExecutableFile(path: string): Promise<boolean> {
  const info = await stat(path).catch(() => null);
  if (!info?.isFile()) return false;
  return access(path, constants.X_OK).then(
    () => true,
    () => false,
  );
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
