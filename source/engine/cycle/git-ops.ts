import { identityEnv } from '../judge/commit.js';
import { type Git, splitNul } from '../judge/git.js';
import { worktreeStatus } from '../judge/repo.js';

/**
 * The git the cycle runs itself (seed 003: "read results from git", rollback authority is the
 * runner's). All through the hardened Git (no hooks, no pager, literal pathspecs).
 */

export async function headOf(git: Git): Promise<string> {
  return git.text(['rev-parse', 'HEAD']);
}

/** Changed and untracked paths, the runner's workspace folder left out. */
export async function dirtyPaths(git: Git, workspaceDir: string): Promise<string[]> {
  const entries = await worktreeStatus(git);
  return entries
    .map((e) => e.slice(3))
    .filter((p) => p !== workspaceDir && !p.startsWith(`${workspaceDir}/`));
}

/**
 * Commits exactly `paths` (tracked changes, new files, deletions); returns the new HEAD or null.
 * `git commit --only` with the paths: whatever else a human staged stays staged, out of the commit.
 */
export async function commitPaths(
  git: Git,
  paths: readonly string[],
  message: string,
): Promise<string | null> {
  if (paths.length === 0) return null;
  const list = `${paths.join('\0')}\0`;
  await git.ok(['add', '-A', '--pathspec-from-file=-', '--pathspec-file-nul'], { stdin: list });
  const wanted = new Set(paths);
  const staged = splitNul(await git.ok(['diff', '--cached', '--name-only', '-z', '--no-renames', 'HEAD']));
  if (!staged.some((p) => wanted.has(p))) return null;
  // The message is an argument: stdin carries the pathspecs.
  await git.ok(
    ['commit', '-q', '--no-verify', '--only', '-m', message, '--pathspec-from-file=-', '--pathspec-file-nul'],
    {
      stdin: list,
      env: await identityEnv(git),
    },
  );
  return headOf(git);
}

export interface NumstatFile {
  readonly path: string;
  readonly added: number;
  readonly deleted: number;
}

/** Files changed between two commits, renames as delete + add, binary files as 0 lines. */
export async function numstat(git: Git, base: string, head: string): Promise<NumstatFile[]> {
  const out = splitNul(await git.ok(['diff', '--numstat', '-z', '--no-renames', base, head, '--']));
  return out.map((line) => {
    const [added = '0', deleted = '0', ...rest] = line.split('\t');
    return { path: rest.join('\t'), added: Number(added) || 0, deleted: Number(deleted) || 0 };
  });
}

export async function diffText(
  git: Git,
  base: string,
  head: string,
  paths: readonly string[] = [],
  context = 3,
): Promise<string> {
  const out = await git.ok(['diff', `-U${context}`, '--no-renames', base, head, '--', ...paths], {
    maxStdoutBytes: 8 * 1024 * 1024,
  });
  return out.toString('utf8');
}

export async function diffStat(git: Git, base: string, head: string): Promise<string> {
  return (await git.ok(['diff', '--stat', base, head, '--'])).toString('utf8').trim();
}

export async function existsAt(git: Git, commit: string, path: string): Promise<boolean> {
  return (await git.run(['cat-file', '-e', `${commit}:${path}`])).code === 0;
}

/** Keeps a failed attempt's leftovers out of the way (seed 003 rollback step 1: stash if dirty). */
export async function stashIfDirty(git: Git, workspaceDir: string, message: string): Promise<boolean> {
  if ((await dirtyPaths(git, workspaceDir)).length === 0) return false;
  // The pathspec `.` is needed: under --literal-pathspecs (the hardened Git) a bare `stash push
  // --include-untracked` stashes new files but leaves them in the tree (git 2.39).
  await git.ok(['stash', 'push', '--include-untracked', '-q', '-m', message, '--', '.'], {
    env: await identityEnv(git),
  });
  return true;
}

/**
 * `base` made a valid branch name, or `-2`, `-3`, ... : the first one not taken yet. An id git
 * refuses in a ref (`T1.lock`, `a..b`, `T1.`) is rewritten rather than failing the rescue.
 */
export async function freeBranchName(git: Git, base: string): Promise<string> {
  let stem = refSafe(base);
  if (!(await isBranchName(git, stem))) stem = `rescue-${Date.now()}`;
  for (let n = 1; ; n++) {
    const name = n === 1 ? stem : `${stem}-${n}`;
    if ((await git.run(['rev-parse', '--verify', '-q', `refs/heads/${name}`])).code !== 0) return name;
  }
}

async function isBranchName(git: Git, name: string): Promise<boolean> {
  return (await git.run(['check-ref-format', '--branch', name])).code === 0;
}

/** What `git check-ref-format` refuses, replaced: odd characters, `..`, a trailing `.` or `.lock`. */
export function refSafe(name: string): string {
  return (
    name
      .replace(/[^A-Za-z0-9._/-]/g, '-')
      .replace(/\.{2,}/g, '.')
      .replace(/\/{2,}/g, '/')
      .split('/')
      .map((part) =>
        part
          .replace(/^\./, '-')
          .replace(/\.lock$/i, '-lock')
          .replace(/\.$/, ''),
      )
      .filter(Boolean)
      .join('/') || 'rescue'
  );
}
