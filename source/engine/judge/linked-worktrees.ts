import { readdir, readFile, realpath, rm } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import type { RepoFacts } from './repo.js';

/**
 * Linked worktrees a builder registered (`git worktree add`): an admin folder under
 * `.git/worktrees/<name>` with a HEAD, index and branch of its own, listed by `git worktree list`
 * and holding its branch "checked out" long after the tick. Removed on STOP with the refs
 * (refs-guard.ts). The checkout folder it named, outside the repository, is left alone: without
 * its admin folder it is no longer a worktree, and the runner deletes nothing outside the
 * repository. Only in the main worktree, and never the runner's own lanes (parallel/, under
 * `<workspace>/worktrees/`), which lanes add and remove while other ticks run.
 */

export async function linkedWorktreeNames(facts: RepoFacts): Promise<ReadonlySet<string>> {
  return new Set(await readdir(join(facts.commonDir, 'worktrees')).catch(() => [] as string[]));
}

export async function removeNewLinkedWorktrees(
  facts: RepoFacts,
  before: ReadonlySet<string>,
  workspaceDir: string,
): Promise<string[]> {
  if (facts.gitDir !== facts.commonDir) return [];
  // The lanes' folder itself, from the real root: a folder elsewhere that merely ends in
  // `relais/worktrees/` (a builder's `git worktree add /tmp/x/relais/worktrees/evil`) is not it.
  const lanes = `${join(await realpath(facts.root).catch(() => facts.root), workspaceDir, 'worktrees')}${sep}`;
  const notes: string[] = [];
  for (const name of await linkedWorktreeNames(facts)) {
    if (before.has(name)) continue;
    const admin = join(facts.commonDir, 'worktrees', name);
    // `gitdir` names the checkout's .git file: <checkout>/.git.
    const gitdir = (await readFile(join(admin, 'gitdir'), 'utf8').catch(() => '')).trim();
    if (gitdir && `${dirname(await realpath(dirname(gitdir)).catch(() => dirname(gitdir)))}${sep}` === lanes)
      continue;
    await rm(admin, { recursive: true, force: true });
    notes.push(
      `removed linked worktree ${name} registered by the tick${gitdir ? ` (${dirname(gitdir)})` : ''}`,
    );
  }
  return notes;
}
