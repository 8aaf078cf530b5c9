import { existsSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The `[dir]` of every project command, settled before the command loads: a folder that does not
 * exist is one clear usage error for every command (not "spawn git ENOENT", not "run git init"),
 * and a folder inside a Relais project means the project, found by walking up to the nearest
 * folder holding `.git` (a folder, or a file in a worktree or submodule), as git itself does.
 * A repository that is not one yet is never walked up to: `relais init` or `ralphy start` in a
 * subfolder of a home folder kept in git says so instead of setting that repository up.
 * A folder in no repository is kept as given: the command then says it is not a git repository.
 */

export type ProjectFolder =
  | { readonly ok: true; readonly root: string; readonly walkedUpFrom: string | null }
  | { readonly ok: false; readonly message: string };

export function findProjectFolder(cwd: string, given: string | undefined): ProjectFolder {
  const folder = resolve(cwd, given ?? '.');
  if (!existsSync(folder)) return { ok: false, message: `no such folder: ${folder}` };
  if (!statSync(folder).isDirectory()) return { ok: false, message: `not a folder: ${folder}` };
  const top = repositoryTop(folder);
  // Only to a repository that is already a Relais project: a folder inside some other repository
  // (a home folder kept in git, before `git init` of the new project) must never make the runner
  // set up, or run agents in, that repository. Kept as given, the command then says the folder is
  // inside a repository and where its root is.
  if (top === null || top === folder || !existsSync(join(top, 'relais.config.json')))
    return { ok: true, root: folder, walkedUpFrom: null };
  return { ok: true, root: top, walkedUpFrom: relative(top, folder) };
}

function repositoryTop(folder: string): string | null {
  for (let at = folder; ; at = dirname(at)) {
    if (existsSync(join(at, '.git'))) return at;
    if (dirname(at) === at) return null;
  }
}
