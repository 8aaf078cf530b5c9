import { type Dirent, lstatSync, readdirSync } from 'node:fs';
import { lstat, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type Git, splitNul } from './git.js';
import { countLines, countLinesInBuffer } from './line-count.js';

/**
 * Files git ignores are invisible to `git status`, yet a builder writing `.env`, or editing
 * `node_modules/<test runner>` so every test passes, is exactly what scope fencing exists for.
 * Ignored paths are listed before and after BUILD; small ignored files keep their bytes (so a
 * rollback can restore them) and the files inside ignored folders are fingerprinted (size, mtime,
 * inode) up to a cap. Folders beyond the cap are named in the report as not judged.
 * Only regular files are ever read: a FIFO or a symlink never blocks or redirects the judge.
 */

interface Fingerprint {
  readonly size: number;
  readonly mtimeMs: number;
  readonly ino: number;
  readonly content: Buffer | null;
}

export interface IgnoredSnapshot {
  /** Ignored files and folders as git lists them (`folder/` for a whole ignored folder). */
  readonly entries: ReadonlyMap<string, Fingerprint & { readonly isDir: boolean }>;
  /** Files inside ignored folders, by repository-relative path. */
  readonly inside: ReadonlyMap<string, Fingerprint>;
  /** Ignored folders that were too large to fingerprint within the cap. */
  readonly unwatched: readonly string[];
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

async function listIgnored(git: Git, workspaceRel: string): Promise<string[]> {
  const out = await git.ok([
    'ls-files',
    '-z',
    '--others',
    '--ignored',
    '--exclude-standard',
    '--directory',
    '--no-empty-directory',
  ]);
  return splitNul(out).filter((p) => p !== `${workspaceRel}/` && p !== workspaceRel);
}

export async function snapshotIgnored(git: Git, workspaceRel: string): Promise<IgnoredSnapshot> {
  const entries = new Map<string, Fingerprint & { isDir: boolean }>();
  const inside = new Map<string, Fingerprint>();
  const unwatched: string[] = [];
  let kept = 0;
  for (const path of await listIgnored(git, workspaceRel)) {
    const full = join(git.root, path);
    const stat = await lstat(full).catch(() => null);
    if (!stat) continue;
    const isDir = path.endsWith('/');
    let content: Buffer | null = null;
    if (!isDir && stat.isFile() && stat.size <= KEEP_FILE_BYTES && kept + stat.size <= KEEP_TOTAL_BYTES) {
      content = await readFile(full).catch(() => null);
      kept += content?.length ?? 0;
    }
    entries.set(path, { isDir, size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino, content });
    if (!isDir) continue;
    const files = await walkFiles(full, path, MAX_INSIDE_FILES - inside.size);
    if (files.complete) for (const [rel, fp] of files.found) inside.set(rel, fp);
    else unwatched.push(path);
  }
  return { entries, inside, unwatched };
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
): Promise<IgnoredChange[]> {
  const now = await listIgnored(git, workspaceRel);
  const changes: IgnoredChange[] = [];
  for (const path of now) {
    const was = before.entries.get(path);
    if (was?.isDir) changes.push(...(await changesInside(git.root, path, before)));
    else changes.push(...(await changesAt(git.root, path, was)));
  }
  const nowSet = new Set(now);
  for (const [path, was] of before.entries) {
    if (nowSet.has(path)) continue;
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

async function changesAt(root: string, path: string, was: Fingerprint | undefined): Promise<IgnoredChange[]> {
  const full = join(root, path);
  if (!was) {
    const files = path.endsWith('/')
      ? [...(await walkFiles(full, path, MAX_NEW_DIR_FILES)).found.keys()]
      : [path];
    return Promise.all(files.map((file) => created(root, file)));
  }
  const stat = await lstat(full).catch(() => null);
  if (!stat) return [];
  const same = was.content
    ? stat.isFile() &&
      stat.size === was.size &&
      (await readFile(full).catch(() => null))?.equals(was.content) === true
    : stat.size === was.size && stat.mtimeMs === was.mtimeMs && stat.ino === was.ino;
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
async function changesInside(root: string, dir: string, before: IgnoredSnapshot): Promise<IgnoredChange[]> {
  if (before.unwatched.includes(dir)) return [];
  const now = (await walkFiles(join(root, dir), dir, MAX_INSIDE_FILES)).found;
  const changes: IgnoredChange[] = [];
  for (const [path, fp] of now) {
    const was = before.inside.get(path);
    if (!was) changes.push(await created(root, path));
    else if (was.size !== fp.size || was.mtimeMs !== fp.mtimeMs || was.ino !== fp.ino) {
      const { lines, binary } = await countLines(join(root, path));
      changes.push({ path, change: 'modified', added: lines, deleted: 0, binary });
    }
  }
  for (const path of before.inside.keys()) {
    if (path.startsWith(dir) && !now.has(path))
      changes.push({ path, change: 'deleted', added: 0, deleted: 0, binary: false });
  }
  return changes;
}

async function created(root: string, path: string): Promise<IgnoredChange> {
  const { lines, binary } = await countLines(join(root, path));
  return { path, change: 'created', added: lines, deleted: 0, binary };
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
): Promise<{ found: Map<string, Fingerprint>; complete: boolean }> {
  const found = new Map<string, Fingerprint>();
  const pending: Array<[string, string]> = [[dir, prefix]];
  while (pending.length > 0) {
    const [abs, rel] = pending.pop() as [string, string];
    let entries: Dirent[];
    try {
      entries = readdirSync(abs, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const childAbs = join(abs, entry.name);
      const childRel = `${rel}${entry.name}`;
      if (entry.isDirectory()) {
        pending.push([childAbs, `${childRel}/`]);
        continue;
      }
      if (found.size >= cap) return { found, complete: false };
      const stat = lstatSync(childAbs, { throwIfNoEntry: false });
      if (stat) found.set(childRel, { size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino, content: null });
    }
  }
  return { found, complete: true };
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

/** Fingerprints only (never contents: an ignored .env holds secrets), for INFLIGHT.json. */
export function serializeIgnored(snapshot: IgnoredSnapshot): {
  ignored: SerializedFingerprint[];
  inside: SerializedFingerprint[];
  unwatched: string[];
} {
  const row = (path: string, f: Fingerprint, dir: boolean): SerializedFingerprint => ({
    path,
    size: f.size,
    mtime_ms: f.mtimeMs,
    ino: f.ino,
    dir,
  });
  return {
    ignored: [...snapshot.entries].map(([path, f]) => row(path, f, f.isDir)),
    inside: [...snapshot.inside].map(([path, f]) => row(path, f, false)),
    unwatched: [...snapshot.unwatched],
  };
}

export function replayIgnored(
  ignored: readonly SerializedFingerprint[],
  inside: readonly SerializedFingerprint[],
  unwatched: readonly string[],
): IgnoredSnapshot {
  const fp = (r: SerializedFingerprint) => ({ size: r.size, mtimeMs: r.mtime_ms, ino: r.ino, content: null });
  return {
    entries: new Map(ignored.map((r) => [r.path, { ...fp(r), isDir: r.dir }])),
    inside: new Map(inside.map((r) => [r.path, fp(r)])),
    unwatched: [...unwatched],
  };
}

export interface SerializedFingerprint {
  readonly path: string;
  readonly size: number;
  readonly mtime_ms: number;
  readonly ino: number;
  readonly dir: boolean;
}
