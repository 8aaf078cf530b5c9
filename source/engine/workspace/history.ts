import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { namesOrEmpty, statOrNull } from '../judge/stat-or-null.js';
import { historySizesSchema } from '../protocol/history-sizes.js';
import { readJsonValidated, writeJsonAtomic } from './atomic-write.js';
import type { WorkspacePaths } from './paths.js';

/**
 * History snapshots (seed 000 §14): one folder per run, kept under `history.max_mb` by rotation:
 * past the cap the oldest runs are deleted, so history never blocks a tick (issue 17).
 */

export function runHistoryDir(paths: WorkspacePaths, runId: string): string {
  return join(paths.historyDir, runId);
}

export async function ensureRunHistoryDir(paths: WorkspacePaths, runId: string): Promise<string> {
  const dir = runHistoryDir(paths, runId);
  await mkdir(dir, { recursive: true });
  return dir;
}

export function historySizesFile(paths: WorkspacePaths): string {
  return join(paths.historyDir, 'sizes.json');
}

/**
 * Folders of history that are not runs and keep their own cap: the agents' transcripts
 * (agents/transcripts.ts, the newest 60 runs) grow while a run goes on, so a size measured once
 * would be wrong, and their cap already bounds them.
 */
const OWN_CAP_FOLDERS = new Set(['agents']);

/**
 * New run folders measured before sizes.json is written again. Each tick adds one folder, and
 * rewriting the whole index for it (5,000 runs: validate, serialize, fsync) cost more than
 * measuring a few small folders again: until the count is reached they are measured each tick and
 * the sizes are the same either way (issue 17).
 */
export const MEASURED_BEFORE_WRITING = 16;

/** What one listing of history's folder holds: its run folders and its own temp files. */
export interface HistoryListing {
  /** Run folders, oldest first: run ids begin with their UTC start time (tick-record.ts). */
  readonly runs: readonly string[];
  /** `*.tmp` files directly in history's folder (sizes.json's, from a run killed mid-write). */
  readonly tmpFiles: readonly string[];
}

/**
 * Lists history's folder once. With thousands of runs this listing is most of what history costs a
 * tick, so the rotation and the stale-temp-file scan share it (issue 17).
 */
export async function listHistory(paths: WorkspacePaths): Promise<HistoryListing> {
  const entries = await readdir(paths.historyDir, { withFileTypes: true }).catch(() => []);
  const runs: string[] = [];
  const tmpFiles: string[] = [];
  for (const entry of entries) {
    if (entry.isDirectory()) {
      if (!OWN_CAP_FOLDERS.has(entry.name)) runs.push(entry.name);
    } else if (entry.name.endsWith('.tmp')) tmpFiles.push(entry.name);
  }
  return { runs: runs.sort(), tmpFiles };
}

/** Run folders, oldest first. */
export async function historyRuns(paths: WorkspacePaths): Promise<readonly string[]> {
  return (await listHistory(paths)).runs;
}

export interface Rotation {
  /** Bytes of history after the rotation. */
  readonly bytes: number;
  /** Run folders deleted (oldest first). */
  readonly removed: string[];
  /** Run folders that had to go but could not be deleted. */
  readonly failed: string[];
  /** History's folder as listed before the rotation, less the folders it deleted. */
  readonly listing: HistoryListing;
}

/**
 * Brings history under `maxBytes` by deleting the oldest run folders. Sizes come from
 * sizes.json, read and checked once; only folders it does not know yet are measured (normally the
 * previous run's), and it is written again only when folders were deleted, named ones are gone, or
 * MEASURED_BEFORE_WRITING new ones were measured. With `apply: false` nothing is deleted or
 * written: the result says what a rotation would do.
 */
export async function rotateHistory(
  paths: WorkspacePaths,
  maxBytes: number,
  apply: boolean,
): Promise<Rotation> {
  const listed = await listHistory(paths);
  const known = await readJsonValidated(historySizesFile(paths), historySizesSchema);
  // A Map, not the parsed object: a run folder named `constructor` must not find Object's own.
  const before = new Map(known.kind === 'ok' ? Object.entries(known.value.runs) : []);
  const sizes = new Map<string, number>();
  let measured = 0;
  for (const run of listed.runs) {
    const size = before.get(run);
    if (size === undefined) measured++;
    sizes.set(run, size ?? folderSizeBytes(join(paths.historyDir, run)));
  }
  const { bytes, removed, failed } = await deleteOldest(paths, listed.runs, sizes, maxBytes, apply);
  // Also written when it names folders that are gone (deleted by hand), so it never grows unbounded.
  const stale = before.size > listed.runs.length - measured;
  if (apply && (removed.length > 0 || measured >= MEASURED_BEFORE_WRITING || stale || known.kind !== 'ok'))
    await writeJsonAtomic(
      historySizesFile(paths),
      historySizesSchema,
      { version: 1, runs: Object.fromEntries(sizes) },
      { compact: true },
    );
  const gone = new Set(removed);
  return {
    bytes,
    removed,
    failed,
    listing: { runs: listed.runs.filter((r) => !gone.has(r)), tmpFiles: listed.tmpFiles },
  };
}

/** Deletes the oldest runs (`sizes` loses each one deleted) until the rest fits under `maxBytes`. */
async function deleteOldest(
  paths: WorkspacePaths,
  runs: readonly string[],
  sizes: Map<string, number>,
  maxBytes: number,
  apply: boolean,
): Promise<{ bytes: number; removed: string[]; failed: string[] }> {
  let bytes = [...sizes.values()].reduce((a, b) => a + b, 0);
  const removed: string[] = [];
  const failed: string[] = [];
  for (const run of runs) {
    if (bytes <= maxBytes) break;
    const ok = apply
      ? await rm(join(paths.historyDir, run), { recursive: true, force: true }).then(
          () => true,
          () => false,
        )
      : true;
    if (!ok) {
      failed.push(run);
      continue;
    }
    bytes -= sizes.get(run) ?? 0;
    sizes.delete(run);
    removed.push(run);
  }
  return { bytes, removed, failed };
}

/**
 * Total bytes under a folder; symlinks count as themselves and are never followed. Synchronous
 * (issue 17): a run's folder is a handful of small files, and each awaited listing or lstat cost a
 * round trip of its own, for up to 16 runs a tick.
 */
export function folderSizeBytes(dir: string): number {
  let total = 0;
  const pending = [dir];
  while (pending.length > 0) {
    const current = pending.pop() as string;
    for (const name of namesOrEmpty(current)) {
      const full = join(current, name);
      const stat = statOrNull(full);
      if (stat?.isDirectory()) pending.push(full);
      else total += Number(stat?.size ?? 0);
    }
  }
  return total;
}
