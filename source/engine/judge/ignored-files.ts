import { lstat, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type Git, splitNul } from './git.js';
import { countLines, countLinesInBuffer } from './line-count.js';

/**
 * Files git ignores are invisible to `git status`, yet a builder writing `.env` or `secrets.txt`
 * into an ignored path is exactly what scope fencing exists for. Ignored files are listed before
 * and after BUILD (ignored folders as one entry, so node_modules costs one line, not a walk);
 * small ones keep their bytes so a rollback can restore them. Limit: a change inside a folder
 * that was already ignored before the build is not seen.
 */

interface IgnoredEntry {
  readonly isDir: boolean;
  readonly size: number;
  readonly mtimeMs: number;
  readonly ino: number;
  readonly content: Buffer | null;
}

export type IgnoredSnapshot = ReadonlyMap<string, IgnoredEntry>;

export interface IgnoredChange {
  readonly path: string;
  readonly change: 'created' | 'modified' | 'deleted';
  readonly added: number;
  readonly deleted: number;
  readonly binary: boolean;
}

const KEEP_FILE_BYTES = 1024 * 1024;
const KEEP_TOTAL_BYTES = 32 * 1024 * 1024;
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
  const entries = new Map<string, IgnoredEntry>();
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
  }
  return entries;
}

export async function diffIgnored(
  git: Git,
  workspaceRel: string,
  before: IgnoredSnapshot,
): Promise<IgnoredChange[]> {
  const now = await listIgnored(git, workspaceRel);
  const changes: IgnoredChange[] = [];
  for (const path of now) changes.push(...(await changesAt(git.root, path, before.get(path))));
  const nowSet = new Set(now);
  for (const [path, was] of before) {
    if (nowSet.has(path)) continue;
    // Gone from the ignored list: deleted, or no longer ignored (then git status sees it).
    const stillThere = await lstat(join(git.root, path)).catch(() => null);
    if (!stillThere) {
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

async function changesAt(
  root: string,
  path: string,
  was: IgnoredEntry | undefined,
): Promise<IgnoredChange[]> {
  const full = join(root, path);
  if (!was) {
    const files = path.endsWith('/') ? await walkFiles(full, path) : [path];
    return Promise.all(files.map((file) => created(root, file)));
  }
  if (was.isDir) return [];
  const stat = await lstat(full).catch(() => null);
  if (!stat) return [];
  const same = was.content
    ? stat.size === was.size && (await readFile(full).catch(() => null))?.equals(was.content) === true
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

async function created(root: string, path: string): Promise<IgnoredChange> {
  const { lines, binary } = await countLines(join(root, path));
  return { path, change: 'created', added: lines, deleted: 0, binary };
}

async function walkFiles(dir: string, prefix: string): Promise<string[]> {
  const files: string[] = [];
  const pending: Array<[string, string]> = [[dir, prefix]];
  while (pending.length > 0 && files.length < MAX_NEW_DIR_FILES) {
    const [abs, rel] = pending.pop() as [string, string];
    for (const entry of await readdir(abs, { withFileTypes: true }).catch(() => [])) {
      const childRel = `${rel}${entry.name}`;
      if (entry.isDirectory()) pending.push([join(abs, entry.name), `${childRel}/`]);
      else files.push(childRel);
    }
  }
  return files.sort();
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
    const was = before.get(c.path);
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
