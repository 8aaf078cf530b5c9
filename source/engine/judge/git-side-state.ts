import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Git, splitNul } from './git.js';
import { type IndexCopy, indexFlags } from './index-copy.js';
import { refsMayExistUnder } from './refs-may-exist.js';

/**
 * Ways to hide an edit from `git diff` without touching a tracked file's visible status: index
 * flags (assume-unchanged, skip-worktree) and replace refs. The runner's git ignores replace refs
 * (--no-replace-objects); this snapshot lets the judge see new flags and refs, stage flagged paths
 * from the worktree anyway, and have rollback take the flags off while it restores content.
 */

export type IndexFlag = 'assume-unchanged' | 'skip-worktree';

export interface GitSideState {
  /** Paths whose index entry carries a flag that makes git skip the worktree file. */
  readonly flagged: ReadonlyMap<string, IndexFlag>;
  readonly replaceRefs: ReadonlySet<string>;
}

export async function readGitSideState(git: Git): Promise<GitSideState> {
  const flagged = new Map<string, IndexFlag>();
  for (const entry of splitNul(await git.ok(['ls-files', '-v', '-z']))) {
    // Tag letters: S is skip-worktree, a lower-case letter is assume-unchanged.
    const tag = entry[0] ?? 'H';
    if (tag === 'S') flagged.set(entry.slice(2), 'skip-worktree');
    else if (tag !== tag.toUpperCase()) flagged.set(entry.slice(2), 'assume-unchanged');
  }
  return { flagged, replaceRefs: await readReplaceRefs(git) };
}

/**
 * The state as the index bytes kept before BUILD show it (no git process, no line per entry);
 * git's own listing when those bytes are not a plain version 2 or 3 index.
 */
export async function readGitSideStateOf(git: Git, index: IndexCopy | null): Promise<GitSideState> {
  const flagged = index ? indexFlags(index.bytes) : null;
  if (!flagged) return readGitSideState(git);
  return { flagged, replaceRefs: await readReplaceRefs(git) };
}

/**
 * The same state, read again after BUILD or VERIFY. Index flags live in the index file and nowhere
 * else, so while `.git/index` is byte for byte the one kept before BUILD its flags are the ones
 * read then, and the listing of every entry (`ls-files -v`, a cost that grows with the
 * repository) is skipped. Replace refs are always listed again.
 */
export async function readGitSideStateAgain(
  git: Git,
  gitDir: string,
  before: GitSideState,
  indexBefore: IndexCopy | null,
): Promise<GitSideState> {
  if (!indexBefore) return readGitSideState(git);
  const now = await readFile(join(gitDir, 'index')).catch(() => null);
  if (!now?.equals(indexBefore.bytes)) return readGitSideState(git);
  return { flagged: before.flagged, replaceRefs: await readReplaceRefs(git) };
}

async function readReplaceRefs(git: Git): Promise<Set<string>> {
  // No replace ref can exist (refs-may-exist.ts says why none made since is missed): no git to ask.
  if (git.commonDir !== null && !refsMayExistUnder(git.commonDir, 'refs/replace')) return new Set();
  const refs = await git.ok(['for-each-ref', '--format=%(refname)', 'refs/replace/']);
  return new Set(refs.toString('utf8').split('\n').filter(Boolean));
}

export interface SideStateChange {
  readonly newFlags: string[];
  readonly newReplaceRefs: string[];
}

export function sideStateChange(before: GitSideState, after: GitSideState): SideStateChange {
  return {
    newFlags: [...after.flagged.keys()].filter((p) => !before.flagged.has(p)).sort(),
    newReplaceRefs: [...after.replaceRefs].filter((r) => !before.replaceRefs.has(r)).sort(),
  };
}

/**
 * Takes every flag off so `reset --hard` rewrites the files, and deletes replace refs the tick
 * added. Returns the flags to put back afterwards: the ones the user had before the tick.
 */
export async function clearForRollback(git: Git, before: GitSideState): Promise<Map<string, IndexFlag>> {
  const now = await readGitSideState(git);
  await updateFlags(git, '--no-assume-unchanged', [...now.flagged.keys()]);
  await updateFlags(git, '--no-skip-worktree', [...now.flagged.keys()]);
  for (const ref of sideStateChange(before, now).newReplaceRefs) await git.ok(['update-ref', '-d', ref]);
  return new Map([...before.flagged].filter(([path]) => now.flagged.has(path)));
}

export async function restoreFlags(git: Git, flags: ReadonlyMap<string, IndexFlag>): Promise<void> {
  const byFlag = (flag: IndexFlag) => [...flags].filter(([, f]) => f === flag).map(([p]) => p);
  await updateFlags(git, '--assume-unchanged', byFlag('assume-unchanged'));
  await updateFlags(git, '--skip-worktree', byFlag('skip-worktree'));
}

/** One flag option per call: with --stdin, git applies only one of several flag options. */
async function updateFlags(git: Git, option: string, paths: string[]): Promise<void> {
  if (paths.length === 0) return;
  await git.ok(['update-index', option, '-z', '--stdin'], { stdin: `${paths.join('\0')}\0` });
}
