import { realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { type Git, splitNul } from './git.js';

/** What the runner knows about the repository at the start of a tick (seed 000 A1 row 2). */
export interface RepoFacts {
  readonly root: string;
  readonly gitDir: string;
  readonly commonDir: string;
  readonly head: string;
  /** `refs/heads/main`, or null when HEAD is detached. */
  readonly branchRef: string | null;
  /**
   * The tree of commit `commit`, read in the same rev-parse as `head` (issue 17: one git process
   * less per tick). Used only while `commit` is still `head`: a commit's id names its content, so
   * its tree cannot have changed; facts carried on with another head fall back to asking git.
   */
  readonly headTree?: { readonly commit: string; readonly tree: string };
}

export type RepoRead = { ok: true; facts: RepoFacts } | { ok: false; detail: string };

export async function readRepoFacts(git: Git, expectedRoot: string): Promise<RepoRead> {
  // The usual case in one process; any failure (no repository, no commit yet, an ambiguous name)
  // takes the step-by-step path below, which says which one it was.
  const all = await git.run([
    'rev-parse',
    '--show-toplevel',
    '--absolute-git-dir',
    '--git-common-dir',
    'HEAD^{commit}',
    'HEAD^{tree}',
    '--symbolic-full-name',
    'HEAD',
  ]);
  const lines = all.stdout.toString('utf8').trim().split('\n');
  const objectId = /^[0-9a-f]{40,64}$/;
  if (
    all.code === 0 &&
    lines.length === 6 &&
    objectId.test(lines[3] ?? '') &&
    objectId.test(lines[4] ?? '')
  ) {
    const [top = '', gitDir = '', common = '', head = '', tree = '', symbolic = ''] = lines;
    const read = await factsFrom(
      expectedRoot,
      top,
      gitDir,
      common,
      head,
      symbolic === 'HEAD' ? null : symbolic,
    );
    return read.ok ? { ok: true, facts: { ...read.facts, headTree: { commit: head, tree } } } : read;
  }
  const where = await git.run(['rev-parse', '--show-toplevel', '--absolute-git-dir', '--git-common-dir']);
  if (where.code !== 0)
    return { ok: false, detail: `not a git repository: ${where.stderr.trim().split('\n')[0] ?? ''}` };
  const [top, gitDir, common] = where.stdout.toString('utf8').trim().split('\n');
  if (!top || !gitDir || !common) return { ok: false, detail: 'git rev-parse gave no repository paths' };
  const head = await git.run(['rev-parse', '--verify', '-q', 'HEAD^{commit}']);
  const symbolic = await git.run(['symbolic-ref', '-q', 'HEAD']);
  return factsFrom(
    expectedRoot,
    top,
    gitDir,
    common,
    head.code === 0 ? head.stdout.toString('utf8').trim() : null,
    symbolic.code === 0 ? symbolic.stdout.toString('utf8').trim() : null,
  );
}

async function factsFrom(
  expectedRoot: string,
  top: string,
  gitDir: string,
  common: string,
  head: string | null,
  branchRef: string | null,
): Promise<RepoRead> {
  const root = await realpath(top);
  const wanted = await realpath(expectedRoot);
  if (root !== wanted) {
    return {
      ok: false,
      detail: `${wanted} is inside the repository ${root}; run relais at the repository root`,
    };
  }
  if (!head) return { ok: false, detail: 'HEAD does not name a commit; make an initial commit first' };
  return {
    ok: true,
    facts: {
      root,
      gitDir: await realpath(gitDir),
      commonDir: await realpath(resolve(root, common)),
      head,
      branchRef,
    },
  };
}

/** The repository's common git folder (where config, hooks and info live), even before a first commit. */
export async function gitCommonDir(git: Git): Promise<string | null> {
  const out = await git.run(['rev-parse', '--git-common-dir']);
  if (out.code !== 0) return null;
  return realpath(resolve(git.root, out.stdout.toString('utf8').trim())).catch(() => null);
}

/**
 * Files git reads its configuration from right now (`git config --list --show-origin`), plus the
 * targets of `include.path` / `includeIf.*.path` even when they do not exist yet: a builder that
 * creates a missing include file would otherwise plant config unseen.
 */
export async function configOriginFiles(git: Git, home: string): Promise<string[]> {
  const listing = await git.run(['config', '--list', '--show-origin', '-z']);
  if (listing.code !== 0) return [];
  const files = new Set<string>();
  const fields = splitNul(listing.stdout);
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const origin = fields[i] ?? '';
    if (!origin.startsWith('file:')) continue;
    const file = resolve(git.root, origin.slice('file:'.length));
    files.add(file);
    const [key = '', value = ''] = (fields[i + 1] ?? '').split('\n');
    if (/^include(if\..*)?\.path$/i.test(key) && value) files.add(includeTarget(value, file, home));
  }
  return [...files];
}

function includeTarget(value: string, includingFile: string, home: string): string {
  if (value.startsWith('~/')) return join(home, value.slice(2));
  return isAbsolute(value) ? value : resolve(dirname(includingFile), value);
}

/**
 * Status lines of the worktree (tracked changes and untracked files; ignored files excluded),
 * for the whole tree or, given `paths`, for those paths only (literal pathspecs).
 */
export async function worktreeStatus(git: Git, paths?: readonly string[]): Promise<string[]> {
  const status = await git.ok([
    'status',
    '--porcelain=v1',
    '-z',
    '--untracked-files=all',
    '--no-renames',
    '--ignore-submodules=dirty',
    ...(paths ? ['--', ...paths] : []),
  ]);
  return splitNul(status);
}
