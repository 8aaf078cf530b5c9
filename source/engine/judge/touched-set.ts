import { lstat, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Git, splitNul } from './git.js';
import type { IgnoredChange } from './ignored-files.js';
import type { ProtectedChange } from './protected-files.js';

/**
 * The judge's touched set (seed 000 §10, corrected): everything that differs between base_commit
 * and the working tree, committed or not, every untracked file, every ignored file the tick
 * created or changed, and every protected file (workspace, git control files) it changed.
 *
 * Git-visible changes are staged into a temporary index built from base_commit, so one `diff
 * --cached` gives exact statuses and line counts (new files and binaries included), the patch for
 * history, and later the exact tree to commit: what was judged is what gets committed.
 */

export type TouchStatus = 'added' | 'modified' | 'deleted' | 'typechange';
export type TouchSource = 'git' | 'ignored' | 'protected';

export interface TouchedFile {
  readonly path: string;
  readonly status: TouchStatus;
  readonly source: TouchSource;
  readonly added: number;
  readonly deleted: number;
  readonly binary: boolean;
  readonly protectedKind?: ProtectedChange['kind'];
  /** A nested repository recorded as a submodule commit: its own git config would be in play. */
  readonly gitlink?: boolean;
}

export interface JudgeIndex {
  /** GIT_INDEX_FILE holding base_commit plus every git-visible change. */
  readonly file: string;
  readonly env: Record<string, string>;
  dispose(): Promise<void>;
}

export interface TouchedSet {
  readonly files: readonly TouchedFile[];
  readonly index: JudgeIndex;
}

export async function computeTouchedSet(
  git: Git,
  base: string,
  ignored: readonly IgnoredChange[],
  protectedChanges: readonly ProtectedChange[],
  /** Paths git diff cannot be trusted for (index flags): staged from the worktree regardless. */
  flaggedPaths: readonly string[] = [],
): Promise<TouchedSet> {
  const index = await createJudgeIndex(git, base);
  try {
    const candidates = [
      ...new Set([...(await gitVisibleCandidates(git, base)), ...(await stageable(git, base, flaggedPaths))]),
    ].sort();
    if (candidates.length > 0) {
      await git.ok(['add', '-A', '--pathspec-from-file=-', '--pathspec-file-nul'], {
        env: index.env,
        stdin: `${candidates.join('\0')}\0`,
      });
    }
    const gitFiles = candidates.length > 0 ? await stagedChanges(git, base, index) : [];
    const files: TouchedFile[] = [
      ...gitFiles,
      ...ignored.map((c) => ({
        path: c.path,
        status: statusOf(c.change),
        source: 'ignored' as const,
        added: c.added,
        deleted: c.deleted,
        binary: c.binary,
      })),
      ...protectedChanges.map((c) => ({
        path: c.display,
        status: statusOf(c.change),
        source: 'protected' as const,
        added: 0,
        deleted: 0,
        binary: false,
        protectedKind: c.kind,
      })),
    ];
    return { files, index };
  } catch (error) {
    await index.dispose();
    throw error;
  }
}

function statusOf(change: 'created' | 'modified' | 'deleted'): TouchStatus {
  return change === 'created' ? 'added' : change;
}

async function createJudgeIndex(git: Git, base: string): Promise<JudgeIndex> {
  const dir = await mkdtemp(join(tmpdir(), 'relais-judge-'));
  const file = join(dir, 'index');
  const env = { GIT_INDEX_FILE: file };
  await git.ok(['read-tree', base], { env });
  return { file, env, dispose: () => rm(dir, { recursive: true, force: true }) };
}

/** Paths that differ from base in the worktree (committed or not) plus untracked files. */
async function gitVisibleCandidates(git: Git, base: string): Promise<string[]> {
  const [tracked, untracked] = await Promise.all([
    git.ok(['diff', '-z', '--name-only', '--no-renames', '--no-ext-diff', '--ignore-submodules=dirty', base]),
    git.ok(['ls-files', '-z', '--others', '--exclude-standard']),
  ]);
  return [...new Set([...splitNul(tracked), ...splitNul(untracked)])].sort();
}

/** Flagged paths `git add` can take: present in the worktree or in base (a hidden deletion). */
async function stageable(git: Git, base: string, paths: readonly string[]): Promise<string[]> {
  if (paths.length === 0) return [];
  const inBase = new Set(
    splitNul(await git.ok(['ls-tree', '-r', '-z', '--name-only', base, '--', ...paths])),
  );
  const present = await Promise.all(
    paths.map((p) =>
      lstat(join(git.root, p)).then(
        () => true,
        () => false,
      ),
    ),
  );
  return paths.filter((p, i) => present[i] || inBase.has(p));
}

async function stagedChanges(git: Git, base: string, index: JudgeIndex): Promise<TouchedFile[]> {
  const common = ['diff', '--cached', '-z', '--no-renames', '--no-ext-diff', '--no-textconv', base];
  const [rawOut, numstatOut] = await Promise.all([
    git.ok([...common.slice(0, 2), '--raw', ...common.slice(2)], { env: index.env }),
    git.ok([...common.slice(0, 2), '--numstat', ...common.slice(2)], { env: index.env }),
  ]);
  // -z raw: ":oldmode newmode oldsha newsha status" then the path, as two fields.
  const statuses = new Map<string, TouchStatus>();
  const gitlinks = new Set<string>();
  const rawFields = splitNul(rawOut);
  for (let i = 0; i + 1 < rawFields.length; i += 2) {
    const [, newMode = '', , , letter = 'M'] = (rawFields[i] as string).slice(1).split(' ');
    const path = rawFields[i + 1] as string;
    statuses.set(path, letterStatus(letter));
    if (newMode === '160000') gitlinks.add(path);
  }
  const files: TouchedFile[] = [];
  for (const record of splitNul(numstatOut)) {
    // -z numstat: "added\tdeleted\tpath" per record when renames are off.
    const [added = '0', deleted = '0', ...rest] = record.split('\t');
    const path = rest.join('\t');
    const binary = added === '-';
    files.push({
      path,
      status: statuses.get(path) ?? 'modified',
      source: 'git',
      gitlink: gitlinks.has(path),
      added: binary ? 0 : Number(added),
      deleted: binary ? 0 : Number(deleted),
      binary,
    });
  }
  return files;
}

function letterStatus(letter: string): TouchStatus {
  switch (letter[0]) {
    case 'A':
      return 'added';
    case 'D':
      return 'deleted';
    case 'T':
      return 'typechange';
    default:
      return 'modified';
  }
}
