import { type Dirent, lstatSync, readdirSync, type Stats } from 'node:fs';
import { lstat, mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { FingerprintRow } from '../protocol/inflight.js';
import { type FsClock, readFsClock } from './fs-clock.js';
import { type Git, splitNul } from './git.js';
import { walkByClock } from './ignored-by-clock.js';
import { ignoredNow, isFolder, type StatusListing } from './ignored-listing.js';
import { countLines, countLinesInBuffer } from './line-count.js';
import { type LinkFacts, linkFactsOf, readRegularFile, type StatMemo } from './stat-or-null.js';

/**
 * Files git ignores are invisible to `git status`, yet a builder writing `.env`, or editing
 * `node_modules/<test runner>` so every test passes, is exactly what scope fencing exists for.
 * Ignored paths are listed before and after BUILD; small ignored files keep their bytes (so a
 * rollback can restore them) and the files inside ignored folders are watched up to a cap. Folders
 * beyond the cap are named in the report as not judged.
 * Only regular files are ever read: a FIFO or a symlink never blocks or redirects the judge.
 *
 * Issue 17: inside an ignored folder on the repository's own filesystem, the snapshot keeps only
 * the file names and the filesystem's clock (fs-clock.ts); afterwards a file is changed when its
 * ctime is not older than that clock, which no write can avoid and no builder can set back. That
 * is one lstat per file per judgement instead of two, and 30k-file `node_modules/` snapshots stay
 * small. A folder on another device (or when the clock cannot be read) keeps full fingerprints
 * (size, mtime, inode, ctime) as before.
 */

interface Fingerprint {
  readonly size: number;
  readonly mtimeMs: number;
  readonly ino: number;
  readonly content: Buffer | null;
  /** Null when not known (a fingerprint replayed from INFLIGHT.json, which does not keep it). */
  readonly ctimeMs?: number | null;
}

/** A file inside an ignored folder: its fingerprint, or null when its folder is judged by ctime. */
type InsideEntry = Fingerprint | null;

export interface IgnoredSnapshot {
  /** Ignored files and folders as git lists them (`folder/` for a whole ignored folder). */
  readonly entries: ReadonlyMap<string, Fingerprint & { readonly isDir: boolean }>;
  /** Files inside ignored folders, by repository-relative path. */
  readonly inside: ReadonlyMap<string, InsideEntry>;
  /** Ignored folders that were too large to fingerprint within the cap. */
  readonly unwatched: readonly string[];
  /** The filesystem clock at the snapshot; null when every folder keeps full fingerprints. */
  readonly clock: FsClock | null;
  /**
   * What the tick's processes can write, when the sandbox fences them (issue 17): repository
   * paths, folders ending in `/`. Ignored paths outside them are neither snapshot nor judged
   * (`narrowToWritable`); null: the whole tree.
   */
  readonly within: readonly string[] | null;
}

export interface IgnoredChange {
  readonly path: string;
  readonly change: 'created' | 'modified' | 'deleted';
  readonly added: number;
  readonly deleted: number;
  readonly binary: boolean;
}

const KEEP_FILE_BYTES = 1024 * 1024;
const KEEP_TOTAL_BYTES = 32 * 1024 * 1024;
/** Files fingerprinted inside ignored folders per tick (node_modules can hold far more). */
const MAX_INSIDE_FILES = 50_000;
const MAX_NEW_DIR_FILES = 10_000;

/**
 * Every ignored path, a wholly ignored folder as one `folder/` entry. Not `--no-empty-directory`:
 * with it git left out ignored files beside a re-included folder (`cache/*` with `!cache/keep/`)
 * once their untracked parent held a file of its own, so a write there was never judged. Without
 * it git may list a folder and also paths inside it: those are judged through the folder.
 */
async function listIgnored(git: Git, workspaceRel: string): Promise<string[]> {
  const out = await git.ok(['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory']);
  return outermost(splitNul(out), workspaceRel);
}

/** The listing without the workspace, and without paths inside a listed folder. */
function outermost(paths: readonly string[], workspaceRel: string): string[] {
  const listed = paths.filter((p) => p !== `${workspaceRel}/` && p !== workspaceRel);
  const folders = listed.filter((p) => p.endsWith('/'));
  return listed.filter((p) => !folders.some((f) => f !== p && p.startsWith(f)));
}

/**
 * An ignored listing cut down to what a fenced tick can change. Inside the sandbox only the
 * writable folders can be written (every other path is a read-only mount), and creating, changing
 * or deleting a path takes writing it or its folder. So an ignored path inside a writable folder
 * stays as it is; an ignored folder that holds writable folders (`node_modules/` holding the
 * checks' `node_modules/.cache/`) is replaced by those folders, which are ignored too (everything
 * below a wholly ignored folder is); any other ignored path cannot change and is left out. The
 * 30k files of a `node_modules/` the task cannot write are then neither listed nor stat'ed.
 */
export function narrowToWritable(paths: readonly string[], within: readonly string[] | null): string[] {
  if (within === null) return [...paths];
  const kept = new Set<string>();
  for (const path of paths) {
    if (within.some((w) => path.startsWith(w))) kept.add(path);
    else if (path.endsWith('/')) for (const w of within) if (w.startsWith(path)) kept.add(w);
  }
  return [...kept];
}

export async function snapshotIgnored(
  git: Git,
  workspaceRel: string,
  /** See `IgnoredSnapshot.within`. */
  within: readonly string[] | null = null,
): Promise<IgnoredSnapshot> {
  const entries = new Map<string, Fingerprint & { isDir: boolean }>();
  const inside = new Map<string, InsideEntry>();
  const unwatched: string[] = [];
  let kept = 0;
  // Read before the listing and the walk: a change made while they run is judged as the builder's.
  const clock = readFsClock(join(git.root, workspaceRel));
  // Synchronous reads, as in walkFiles: 3,000 ignored build outputs beside their sources (`*.o`)
  // took a second of awaited lstat and readFile round trips here, and as long again after BUILD.
  for (const path of narrowToWritable(await listIgnored(git, workspaceRel), within)) {
    const full = join(git.root, path);
    const stat = lstatOrNull(full);
    if (!stat) continue;
    const isDir = path.endsWith('/');
    let content: Buffer | null = null;
    if (!isDir && stat.isFile() && stat.size <= KEEP_FILE_BYTES && kept + stat.size <= KEEP_TOTAL_BYTES) {
      content = readRegularFile(full);
      kept += content?.length ?? 0;
    }
    entries.set(path, {
      isDir,
      size: stat.size,
      mtimeMs: stat.mtimeMs,
      ino: stat.ino,
      ctimeMs: stat.ctimeMs,
      content,
    });
    if (!isDir) continue;
    const byClock = clock !== null && stat.isDirectory() && stat.dev === clock.dev;
    const files = byClock
      ? listNames(full, path, MAX_INSIDE_FILES - inside.size)
      : await walkFiles(full, path, MAX_INSIDE_FILES - inside.size);
    if (files.complete) for (const [rel, fp] of files.found) inside.set(rel, fp);
    else unwatched.push(path);
  }
  return { entries, inside, unwatched, clock, within };
}

/** Report lines for what the snapshot could not watch. */
export function ignoredBlindSpots(snapshot: IgnoredSnapshot): string[] {
  return snapshot.unwatched.map(
    (dir) => `ignored folder ${dir} holds too many files to fingerprint; changes inside it were not judged`,
  );
}

export async function diffIgnored(
  git: Git,
  workspaceRel: string,
  before: IgnoredSnapshot,
  /**
   * Filled, for each ignored folder walked completely, with the lstat of its files changed since
   * `sinceMs`, for the unsafe-files walk that follows (which then skips those folders).
   */
  memo?: { readonly walked: StatMemo; readonly sinceMs: number },
  /**
   * The ignored paths of the judge's own `git status --ignored=matching` pass (ignored-listing.ts),
   * used instead of a listing of its own when it has the snapshot's form; null or absent: git is
   * asked (`ls-files`), as before.
   */
  fromStatus?: StatusListing | null,
): Promise<IgnoredChange[]> {
  const { within } = before;
  const matched = fromStatus
    ? ignoredNow(
        narrowToWritable(outermost(fromStatus.ignored, workspaceRel), within),
        fromStatus.changed,
        before.entries.keys(),
      )
    : null;
  const usable = matched !== null;
  const now = matched ?? narrowToWritable(await listIgnored(git, workspaceRel), within);
  const changes: IgnoredChange[] = [];
  const byFolder = namesByFolder(before);
  const walk = (path: string) => changesInside(git.root, path, before, byFolder.get(path), memo);
  for (const path of now) {
    const was = before.entries.get(path);
    if (was?.isDir) changes.push(...(await walk(path)));
    else changes.push(...(await changesAt(git.root, path, was, before.clock)));
  }
  const nowSet = new Set(now);
  for (const [path, was] of before.entries) {
    if (nowSet.has(path)) continue;
    if (usable && was.isDir && (await isFolder(join(git.root, path)))) {
      // Holds no file git shows (ignored-listing.ts): walked as ls-files would have had it.
      changes.push(...(await walk(path)));
      continue;
    }
    // Gone from the ignored list: deleted, or no longer ignored (then git status sees it).
    const stillThere = await lstat(join(git.root, path)).catch(() => null);
    if (!stillThere && !was.isDir) {
      changes.push({
        path,
        change: 'deleted',
        added: 0,
        deleted: was.content ? countLinesInBuffer(was.content) : 0,
        binary: false,
      });
    }
  }
  return changes.sort((a, b) => a.path.localeCompare(b.path));
}

interface FolderNames {
  readonly names: Set<string>;
  /** Every file below the folder is judged by the clock (no fingerprint kept). */
  readonly byClock: boolean;
}

/** The snapshot's files grouped by the ignored folder they are in (one pass). */
function namesByFolder(before: IgnoredSnapshot): Map<string, FolderNames> {
  const folders = [...before.entries].filter(([, e]) => e.isDir).map(([path]) => path);
  const groups = new Map<string, { names: Set<string>; byClock: boolean }>(
    folders.map((f) => [f, { names: new Set<string>(), byClock: before.clock !== null }]),
  );
  let current: string | undefined;
  for (const [path, entry] of before.inside) {
    if (current === undefined || !path.startsWith(current)) current = folders.find((f) => path.startsWith(f));
    const group = current === undefined ? undefined : groups.get(current);
    if (!group) continue;
    group.names.add(path);
    if (entry !== null) group.byClock = false;
  }
  return groups;
}

async function changesAt(
  root: string,
  path: string,
  was: Fingerprint | undefined,
  clock: FsClock | null,
): Promise<IgnoredChange[]> {
  const full = join(root, path);
  if (!was) {
    const files = path.endsWith('/') ? [...listNames(full, path, MAX_NEW_DIR_FILES).found.keys()] : [path];
    return Promise.all(files.map((file) => created(root, file)));
  }
  const stat = lstatOrNull(full);
  if (!stat) return [];
  const same = was.content
    ? stat.isFile() &&
      stat.size === was.size &&
      (untouchedSince(was, stat, clock) || readRegularFile(full)?.equals(was.content) === true)
    : stat.size === was.size &&
      stat.mtimeMs === was.mtimeMs &&
      stat.ino === was.ino &&
      (was.ctimeMs == null || stat.ctimeMs === was.ctimeMs);
  if (same) return [];
  const { lines, binary } = await countLines(full);
  return [
    {
      path,
      change: 'modified',
      added: lines,
      deleted: was.content ? countLinesInBuffer(was.content) : 0,
      binary,
    },
  ];
}

/** Files created, changed or deleted inside an ignored folder that existed before the build. */
async function changesInside(
  root: string,
  dir: string,
  before: IgnoredSnapshot,
  folder: FolderNames | undefined,
  memo: { readonly walked: StatMemo; readonly sinceMs: number } | undefined,
): Promise<IgnoredChange[]> {
  if (before.unwatched.includes(dir)) return [];
  const abs = join(root, dir).replace(/\/$/, '');
  if (folder?.byClock && before.clock) {
    const walked = walkByClock(
      root,
      dir,
      folder.names,
      before.clock,
      memo?.sinceMs ?? Number.POSITIVE_INFINITY,
      MAX_INSIDE_FILES,
    );
    if (memo && walked.complete) memo.walked.set(abs, walked.recent);
    const changes: IgnoredChange[] = [];
    for (const path of walked.created) changes.push(await created(root, path));
    for (const path of walked.modified) changes.push(await modified(root, path));
    for (const path of walked.deleted)
      changes.push({ path, change: 'deleted', added: 0, deleted: 0, binary: false });
    return changes;
  }
  const facts = memo ? new Map<string, LinkFacts>() : undefined;
  const walked = await walkFiles(abs, dir, MAX_INSIDE_FILES, facts);
  // Handed to the unsafe-files walk only when complete: it then skips reading this folder again.
  if (memo && facts && walked.complete) memo.walked.set(abs, facts);
  const now = walked.found;
  const changes: IgnoredChange[] = [];
  for (const [path, fp] of now) {
    const was = before.inside.get(path);
    if (was === undefined) changes.push(await created(root, path));
    else if (changedSince(was, fp, before.clock)) changes.push(await modified(root, path));
  }
  for (const path of folder?.names ?? []) {
    if (!now.has(path)) changes.push({ path, change: 'deleted', added: 0, deleted: 0, binary: false });
  }
  return changes;
}

/**
 * A kept file is unchanged without reading it again when its inode, mtime and ctime are those of
 * the snapshot and that ctime is older than the snapshot's clock (fs-clock.ts): the clock was read
 * before the snapshot, so any write since gave the file a ctime not older than the clock, which
 * differs from the one kept. A file changed while the snapshot ran (ctime not older than the clock),
 * one on another device, or one with no ctime kept (replayed from INFLIGHT.json) is read and its
 * bytes compared, as before (issue 17: 3,000 kept files were read twice a tick).
 */
function untouchedSince(was: Fingerprint, now: Stats, clock: FsClock | null): boolean {
  return (
    clock !== null &&
    now.dev === clock.dev &&
    was.ctimeMs != null &&
    was.ctimeMs < clock.sinceMs &&
    now.ctimeMs === was.ctimeMs &&
    now.mtimeMs === was.mtimeMs &&
    now.ino === was.ino
  );
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}

/**
 * With a fingerprint: any of size, mtime, inode or ctime differs. Without one (the folder was on
 * the clock's filesystem): the file's ctime is not older than the clock, i.e. it changed after the
 * snapshot began (fs-clock.ts says why nothing can change it without that).
 */
function changedSince(was: InsideEntry, now: WalkedFile, clock: FsClock | null): boolean {
  if (was === null) return clock === null || now.ctimeMs >= clock.sinceMs;
  return (
    was.size !== now.size ||
    was.mtimeMs !== now.mtimeMs ||
    was.ino !== now.ino ||
    (was.ctimeMs != null && was.ctimeMs !== now.ctimeMs)
  );
}

async function modified(root: string, path: string): Promise<IgnoredChange> {
  const { lines, binary } = await countLines(join(root, path));
  return { path, change: 'modified', added: lines, deleted: 0, binary };
}

async function created(root: string, path: string): Promise<IgnoredChange> {
  const { lines, binary } = await countLines(join(root, path));
  return { path, change: 'created', added: lines, deleted: 0, binary };
}

interface WalkedFile extends Fingerprint {
  readonly ctimeMs: number;
}

/**
 * Every non-folder entry below `dir` (symlinks and FIFOs included, never followed or opened).
 * Synchronous on purpose: tens of thousands of lstat calls cost ~0.1 s this way and seconds
 * through the promise API, and nothing else runs in the runner while it judges.
 */
async function walkFiles(
  dir: string,
  prefix: string,
  cap: number,
  memo?: Map<string, LinkFacts>,
): Promise<{ found: Map<string, WalkedFile>; complete: boolean }> {
  const found = new Map<string, WalkedFile>();
  const complete = walkTree(dir, prefix, (abs, rel) => {
    if (found.size >= cap) return false;
    const stat = lstatSync(abs, { throwIfNoEntry: false });
    if (!stat) return true;
    found.set(rel, fingerprintOf(stat));
    memo?.set(abs, linkFactsOf(stat));
    return true;
  });
  return { found, complete };
}

/** The same entries as walkFiles, names only: no lstat (readdir's file types say what is a folder). */
function listNames(
  dir: string,
  prefix: string,
  cap: number,
): { found: Map<string, null>; complete: boolean } {
  const found = new Map<string, null>();
  const complete = walkTree(dir, prefix, (_abs, rel) => {
    if (found.size >= cap) return false;
    found.set(rel, null);
    return true;
  });
  return { found, complete };
}

/** Calls `visit` for every non-folder entry; false from it stops the walk (returns incomplete). */
function walkTree(dir: string, prefix: string, visit: (abs: string, rel: string) => boolean): boolean {
  const pending: Array<[string, string]> = [[dir.replace(/\/$/, ''), prefix]];
  while (pending.length > 0) {
    const [abs, rel] = pending.pop() as [string, string];
    let entries: Dirent[];
    try {
      entries = readdirSync(abs, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      // Not path.join (it normalizes every path, a large part of this walk's time): `abs` is
      // already normal, and a name from readdir holds no slash.
      const childAbs = `${abs}/${entry.name}`;
      const childRel = `${rel}${entry.name}`;
      if (entry.isDirectory()) pending.push([childAbs, `${childRel}/`]);
      else if (!visit(childAbs, childRel)) return false;
    }
  }
  return true;
}

function fingerprintOf(stat: Stats): WalkedFile {
  return { size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino, content: null, ctimeMs: stat.ctimeMs };
}

/** Rollback of ignored files: remove what the tick created, restore what it changed when we can. */
export async function restoreIgnored(
  root: string,
  before: IgnoredSnapshot,
  changes: readonly IgnoredChange[],
): Promise<string[]> {
  const unrestorable: string[] = [];
  for (const c of changes) {
    const full = join(root, c.path);
    if (c.change === 'created') {
      await rm(full, { recursive: true, force: true });
      continue;
    }
    const was = before.entries.get(c.path);
    if (!was?.content) {
      unrestorable.push(c.path);
      continue;
    }
    await rm(full, { recursive: true, force: true });
    await mkdir(dirname(full), { recursive: true });
    await writeFile(full, was.content);
  }
  return unrestorable;
}

/**
 * Fingerprints and names only (never contents: an ignored .env holds secrets), for INFLIGHT.json.
 * Files judged by the clock are kept as names with the clock itself: ctime survives a crash, so a
 * recovery judges them exactly as the tick would have.
 */
export function serializeIgnored(snapshot: IgnoredSnapshot): SerializedIgnored {
  const row = (path: string, f: Fingerprint, dir: boolean): SerializedFingerprint => ({
    path,
    size: f.size,
    mtime_ms: f.mtimeMs,
    ino: f.ino,
    dir,
  });
  const inside: SerializedFingerprint[] = [];
  const names: string[] = [];
  for (const [path, f] of snapshot.inside) {
    if (f === null) names.push(path);
    else inside.push(row(path, f, false));
  }
  const { clock } = snapshot;
  return {
    ignored: [...snapshot.entries].map(([path, f]) => row(path, f, f.isDir)),
    inside,
    names,
    unwatched: [...snapshot.unwatched],
    clock: clock ? { since_ms: clock.sinceMs, dev: clock.dev } : null,
    within: snapshot.within === null ? null : [...snapshot.within],
  };
}

export function replayIgnored(saved: SerializedIgnored): IgnoredSnapshot {
  const fp = (r: SerializedFingerprint) => ({ size: r.size, mtimeMs: r.mtime_ms, ino: r.ino, content: null });
  const clock = saved.clock ? { sinceMs: saved.clock.since_ms, dev: saved.clock.dev } : null;
  const inside = new Map<string, InsideEntry>(saved.inside.map((r) => [r.path, fp(r)]));
  // Without the clock (an INFLIGHT.json written before it was kept), names alone judge nothing:
  // changedSince then calls every such file changed, and a human looks.
  for (const name of saved.names) inside.set(name, null);
  return {
    entries: new Map(saved.ignored.map((r) => [r.path, { ...fp(r), isDir: r.dir }])),
    inside,
    unwatched: [...saved.unwatched],
    clock,
    // Absent in an INFLIGHT.json written before it was kept: that snapshot covered the whole tree.
    within: saved.within ?? null,
  };
}

export interface SerializedIgnored {
  readonly ignored: readonly SerializedFingerprint[];
  readonly inside: readonly SerializedFingerprint[];
  /** Files inside ignored folders judged by the clock: names only. */
  readonly names: readonly string[];
  readonly unwatched: readonly string[];
  readonly clock: { readonly since_ms: number; readonly dev: number } | null;
  readonly within?: readonly string[] | null;
}

/** One ignored path's fingerprint in INFLIGHT.json (its rows: protocol/inflight.ts). */
export type SerializedFingerprint = FingerprintRow;
