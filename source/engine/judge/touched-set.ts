import { lstat, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { scratchPrefix } from '../sandbox/leftover-scratch.js';
import { type Git, splitNul } from './git.js';
import type { IgnoredChange } from './ignored-files.js';
import type { StatusListing } from './ignored-listing.js';
import { type IndexCopy, writeIndexCopy } from './index-copy.js';
import { countLines, countLinesInBuffer } from './line-count.js';
import type { ProtectedChange } from './protected-files.js';

/**
 * The judge's touched set (seed 000 §10, corrected): everything that differs between base_commit
 * and the working tree, committed or not, every untracked file, every ignored file the tick
 * created or changed, and every protected file (workspace, git control files) it changed.
 *
 * Git-visible changes are staged into a temporary index built from base_commit, so one `diff
 * --cached` gives exact statuses and line counts (new files and binaries included), the patch for
 * history, and later the exact tree to commit: what was judged is what gets committed.
 *
 * When the index as it was before BUILD is known (index-copy.ts), the temporary index starts from
 * it instead of from `read-tree base`, and one `git status` pass through it finds the candidates:
 * git compares stat data first, so the cost follows what changed, not the repository's size.
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
  /** Started from the pre-build `.git/index` (stat data and all), not from `read-tree base`. */
  readonly fromWorktreeIndex?: boolean;
  dispose(): Promise<void>;
}

export interface TouchedSet {
  readonly files: readonly TouchedFile[];
  readonly index: JudgeIndex;
}

/**
 * Judges the ignored files, given the ignored paths of the judge's status pass when it ran one
 * (null otherwise): `diffIgnored` with that listing (ignored-listing.ts).
 */
export type JudgeIgnored = (fromStatus: StatusListing | null) => Promise<IgnoredChange[]>;

export async function computeTouchedSet(
  git: Git,
  base: string,
  ignoredChanges: readonly IgnoredChange[] | JudgeIgnored,
  protectedChanges: readonly ProtectedChange[],
  /** Paths git diff cannot be trusted for (index flags): staged from the worktree regardless. */
  flaggedPaths: readonly string[] = [],
  /** The index as it was right before BUILD (see index-copy.ts); null: start from base_commit. */
  indexBefore: IndexCopy | null = null,
  /**
   * Inside the sandbox, the repository paths the tick's processes could write (`writableInTree`:
   * folders end in `/`); null: any path. The worktree passes then read only those (`writablePathspec`).
   */
  within: readonly string[] | null = null,
): Promise<TouchedSet> {
  const index = await createJudgeIndex(git, base, indexBefore);
  try {
    const pathspec = writablePathspec(within);
    const status = indexBefore ? await statusCandidates(git, index, pathspec) : null;
    const visible = status ? status.changed : await gitVisibleCandidates(git, base, pathspec);
    const ignored = typeof ignoredChanges === 'function' ? await ignoredChanges(status) : ignoredChanges;
    const candidates = [...new Set([...visible, ...(await stageable(git, base, flaggedPaths))])].sort();
    if (candidates.length > 0) {
      await git.ok(['add', '-A', '--pathspec-from-file=-', '--pathspec-file-nul'], {
        env: index.env,
        stdin: `${candidates.join('\0')}\0`,
      });
    }
    const gitFiles =
      candidates.length > 0 ? await countedAsText(git, base, await stagedChanges(git, base, index)) : [];
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

async function createJudgeIndex(git: Git, base: string, before: IndexCopy | null): Promise<JudgeIndex> {
  const dir = await mkdtemp(join(tmpdir(), scratchPrefix('judge')));
  const file = join(dir, 'index');
  const env = { GIT_INDEX_FILE: file };
  const dispose = () => rm(dir, { recursive: true, force: true });
  try {
    if (before) await writeIndexCopy(before, file);
    else await git.ok(['read-tree', base], { env });
  } catch (error) {
    await dispose();
    throw error;
  }
  return { file, env, fromWorktreeIndex: before !== null, dispose };
}

/**
 * Every path `git status` reports through the pre-build index: tracked paths whose worktree file
 * differs from that index, paths where that index differs from HEAD, and untracked files.
 *
 * Why this cannot miss a change against base_commit: preflight proved the index equal to base
 * (no staged change) right before BUILD, and this index is that one, byte for byte, so a path
 * whose worktree file differs from base differs from this index; git reports it unless the stat
 * data still matches, which a write cannot arrange: every write moves ctime, and the hardening
 * pins core.trustctime, core.checkStat and core.ignoreStat, while an entry not older than the
 * index file is compared by content (racy git; writeIndexCopy keeps the original mtime). Entries
 * git skips by flag (assume-unchanged, skip-worktree) come in through `flaggedPaths`. Anything
 * this index still differs from base in (a start that was not clean) is staged as it is and shows
 * in `diff --cached base` all the same. Given a `pathspec` (inside the sandbox: the paths the tick
 * could write, `writablePathspec`), only those paths are read and reported.
 */
export async function statusCandidates(
  git: Git,
  index: Pick<JudgeIndex, 'env'>,
  pathspec: readonly string[] = [],
): Promise<StatusPaths> {
  const out = await git.ok(
    [
      // The untracked cache trusts folder mtimes, which a builder can set back: not used here.
      '-c',
      'core.untrackedCache=false',
      'status',
      '--porcelain=v2',
      '-z',
      '--untracked-files=all',
      // The ignored listing rides on this pass (one walk of the worktree less): ignored-listing.ts.
      // Limited by `pathspec`, it lists an ignored folder above a writable one whole, as the full
      // pass does, and nothing outside; the snapshot it is matched with was narrowed to the same
      // writable paths (`narrowToWritable`), which maps either form onto the same folders.
      '--ignored=matching',
      '--no-renames',
      '--ignore-submodules=dirty',
      ...pathspec,
    ],
    { env: index.env },
  );
  return splitStatusV2(out);
}

/** Past this many bytes of paths the worktree passes read the whole tree (argv stays small). */
const MAX_PATHSPEC_BYTES = 64 * 1024;

/**
 * The worktree passes' pathspec inside the sandbox (issue 17: the judge's cost follows what the
 * tick could change, not the repository's size): `--` and the writable paths, or nothing (the
 * whole tree) without the sandbox, when the root is writable, or when the list is too long.
 *
 * Why a path outside them cannot have changed during BUILD: every process of the tick ran inside
 * bwrap, where each writable folder is its own bind mount and everything else (the rest of the
 * tree, `.git/`, the workspace) is mounted read-only, so a write, create, delete or rename there
 * fails with EROFS, and a writable folder itself cannot be removed or renamed (a mount point is
 * busy). Before BUILD only the runner and the orchestrator ran since the preflight's full status,
 * and the orchestrator can write nothing in the repository. A change made outside them by a
 * process outside Relais is not seen by this judge: it is never committed (the commit is the
 * judged index, which holds base there), and the next preflight's full status finds it.
 *
 * What stays whole: `diff --cached base` compares the judge's index with base (no worktree file
 * is read), so anything that index holds beyond base is still judged; flagged paths are staged
 * regardless. The git port passes `--literal-pathspecs`, so a path is matched as written (a folder
 * named `a*b` or `:(glob)x` is only itself; spaces and newlines pass as they are in argv), and a
 * folder's trailing `/` matches everything below it. A path that does not exist matches nothing
 * (status does not fail on it).
 */
export function writablePathspec(within: readonly string[] | null): string[] {
  if (within === null || within.length === 0) return [];
  const bytes = within.reduce((sum, path) => sum + Buffer.byteLength(path) + 1, 0);
  return bytes > MAX_PATHSPEC_BYTES ? [] : ['--', ...within];
}

/** Paths of `status --porcelain=v2 -z` records (renames off, so one path per record). */
export function parseStatusV2(out: Buffer): string[] {
  return splitStatusV2(out).changed;
}

export interface StatusPaths extends StatusListing {
  readonly changed: string[];
  readonly ignored: string[];
}

export function splitStatusV2(out: Buffer): StatusPaths {
  const paths: string[] = [];
  const ignored: string[] = [];
  for (const record of splitNul(out)) {
    const kind = record[0];
    // Field counts before the path: ordinary 8, unmerged 10, untracked and ignored 1.
    const fields = kind === '1' ? 8 : kind === 'u' ? 10 : kind === '?' || kind === '!' ? 1 : -1;
    if (fields < 0) throw new Error(`unexpected git status record: ${record.slice(0, 80)}`);
    let at = 0;
    for (let i = 0; i < fields; i++) at = record.indexOf(' ', at) + 1;
    (kind === '!' ? ignored : paths).push(record.slice(at));
  }
  return { changed: paths, ignored };
}

/** Paths that differ from base in the worktree (committed or not) plus untracked files. */
async function gitVisibleCandidates(git: Git, base: string, pathspec: readonly string[]): Promise<string[]> {
  const [tracked, untracked] = await Promise.all([
    git.ok([
      'diff',
      '-z',
      '--name-only',
      '--no-renames',
      '--no-ext-diff',
      '--ignore-submodules=dirty',
      base,
      ...pathspec,
    ]),
    git.ok(['ls-files', '-z', '--others', '--exclude-standard', ...pathspec]),
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
  // One process for both formats: git prints every raw record, then every numstat record.
  const out = await git.ok(
    ['diff', '--cached', '--raw', '--numstat', '-z', '--no-renames', '--no-ext-diff', '--no-textconv', base],
    { env: index.env },
  );
  // -z raw: ":oldmode newmode oldsha newsha status" then the path, as two fields.
  const statuses = new Map<string, TouchStatus>();
  const gitlinks = new Set<string>();
  const fields = splitNul(out);
  let i = 0;
  for (; i + 1 < fields.length && (fields[i] as string).startsWith(':'); i += 2) {
    const [, newMode = '', , , letter = 'M'] = (fields[i] as string).slice(1).split(' ');
    const path = fields[i + 1] as string;
    statuses.set(path, letterStatus(letter));
    if (newMode === '160000') gitlinks.add(path);
  }
  const files: TouchedFile[] = [];
  for (const record of fields.slice(i)) {
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

/**
 * git counts lines by the attributes in the worktree: a `.gitattributes` saying `-diff` or
 * `binary` makes any text file "binary", and a binary change counts zero lines, so a builder that
 * writes one beside its files could rewrite them whole under `max_lines_changed`. When the tick
 * touched a `.gitattributes`, every file git called binary is read again the way git decides
 * without attributes (a NUL byte in the first 8000 bytes): a text file counts every line of its
 * old content as deleted and every line of its new one as added (a rewrite, the most it can be).
 * The user's own attributes, untouched, keep counting as they always did.
 */
async function countedAsText(git: Git, base: string, files: TouchedFile[]): Promise<TouchedFile[]> {
  if (!files.some((f) => basename(f.path) === '.gitattributes')) return files;
  return Promise.all(
    files.map(async (file) => {
      if (!file.binary || file.gitlink) return file;
      const after =
        file.status === 'deleted' ? { lines: 0, binary: false } : await countLines(join(git.root, file.path));
      const old =
        file.status === 'added' ? null : await git.run(['cat-file', 'blob', `${base}:${file.path}`]);
      const oldContent = old && old.code === 0 ? old.stdout : Buffer.alloc(0);
      if (after.binary || oldContent.subarray(0, 8000).includes(0)) return file;
      return { ...file, binary: false, added: after.lines, deleted: countLinesInBuffer(oldContent) };
    }),
  );
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
