import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { namesOrEmpty, statOrNull } from '../judge/stat-or-null.js';
import { historySizesSchema } from '../protocol/history-sizes.js';
import type { HistoryTally } from '../protocol/history-tally.js';
import { readJsonValidated, writeJsonAtomic } from './atomic-write.js';
import { type HistoryKnown, readCurrentTally } from './history-tally.js';
import { TRANSCRIPTS_FOLDER, type WorkspacePaths } from './paths.js';

/**
 * History snapshots (seed 000 §14): one folder per run, kept under `history.max_mb` by rotation:
 * past the cap the oldest runs are deleted, so history never blocks a tick (issue 17).
 */

export function runHistoryDir(paths: WorkspacePaths, runId: string): string {
  return join(paths.historyDir, runId);
}

/**
 * The run's folder, and the agents' transcripts folder beside it when it is not there yet: made
 * here, before the tick reads history's stamp, its first creation does not change history's
 * folder in the middle of a tick, which would cost that tick its tally (history-tally.ts).
 */
export async function ensureRunHistoryDir(paths: WorkspacePaths, runId: string): Promise<string> {
  const dir = runHistoryDir(paths, runId);
  await mkdir(dir, { recursive: true });
  // Best effort, as the transcripts are: a file or a broken link in its place only costs the tally.
  await mkdir(join(paths.historyDir, TRANSCRIPTS_FOLDER), { recursive: true }).catch(() => undefined);
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
const OWN_CAP_FOLDERS = new Set([TRANSCRIPTS_FOLDER]);

/**
 * Run folders measured before sizes.json is written again. Each tick adds one folder, and
 * rewriting the whole index for it (5,000 runs: validate, serialize, fsync) cost more than keeping
 * the few new sizes elsewhere: in the tally between ticks (history-tally.ts), or measured again
 * when there is none. It also bounds how many ticks may trust a tally before one lists history
 * again (issue 17).
 */
export const MEASURED_BEFORE_WRITING = 16;

/** Run folders the stale-temp-file scan looks into: the newest, where a killed run left its own. */
export const NEWEST_RUNS_KEPT = 20;

/** What a tick learns of history's folder, from a listing or from the last tick's tally. */
export interface HistoryListing {
  /** The newest run folders (up to NEWEST_RUNS_KEPT), oldest first: run ids begin with their UTC start time. */
  readonly newest: readonly string[];
  /** `*.tmp` files directly in history's folder (sizes.json's, from a run killed mid-write). */
  readonly tmpFiles: readonly string[];
}

interface FullListing {
  /** Every run folder, oldest first. */
  readonly runs: string[];
  readonly tmpFiles: string[];
}

/**
 * Lists history's folder once. With thousands of runs this listing is most of what history costs a
 * tick, so the rotation and the stale-temp-file scan share it (issue 17).
 */
async function listAll(paths: WorkspacePaths): Promise<FullListing> {
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

export async function listHistory(paths: WorkspacePaths): Promise<HistoryListing> {
  const { runs, tmpFiles } = await listAll(paths);
  return { newest: runs.slice(-NEWEST_RUNS_KEPT), tmpFiles };
}

export interface Rotation {
  /** Bytes of history after the rotation. */
  readonly bytes: number;
  /** Run folders deleted (oldest first). */
  readonly removed: string[];
  /** Run folders that had to go but could not be deleted. */
  readonly failed: string[];
  /** History's folder after the rotation. */
  readonly listing: HistoryListing;
  /** What the tick knows of history now, for the tally it keeps when it ends (history-tally.ts). */
  readonly known: HistoryKnown;
}

/**
 * Brings history under `maxBytes` by deleting the oldest run folders. When the last tick's tally
 * is current (history-tally.ts), nothing is listed: only that tick's own folder is measured.
 * Otherwise sizes come from sizes.json, read and checked once (and a current tally's measured
 * sizes, when it was current but history is above the cap or sizes wait to be saved);
 * only folders neither knows are measured, and sizes.json is written again only when folders were
 * deleted, named ones are gone, or MEASURED_BEFORE_WRITING folders are not in it. With
 * `apply: false` nothing is deleted or written: the result says what a rotation would do.
 */
export async function rotateHistory(
  paths: WorkspacePaths,
  maxBytes: number,
  apply: boolean,
): Promise<Rotation> {
  const tally = await readCurrentTally(paths);
  const trusted = tally && fromTally(paths, tally, maxBytes);
  if (trusted) return trusted;
  const listed = await listAll(paths);
  const known = await readJsonValidated(historySizesFile(paths), historySizesSchema);
  // Maps, not the parsed objects: a run folder named `constructor` must not find Object's own.
  const saved = new Map(known.kind === 'ok' ? Object.entries(known.value.runs) : []);
  // A current tally's sizes (above the cap, or enough of them to save); without one, at most 15
  // small folders are measured again.
  const carried = new Map(tally?.unsaved ?? []);
  const sizes = new Map<string, number>();
  let unsaved = 0;
  for (const run of listed.runs) {
    const size = saved.get(run) ?? carried.get(run) ?? folderSizeBytes(join(paths.historyDir, run));
    if (!saved.has(run)) unsaved++;
    sizes.set(run, size);
  }
  const { bytes, removed, failed } = await deleteOldest(paths, listed.runs, sizes, maxBytes, apply);
  // Also written when it names folders that are gone (deleted by hand), so it never grows unbounded.
  const stale = saved.size > listed.runs.length - unsaved;
  const write =
    apply && (removed.length > 0 || unsaved >= MEASURED_BEFORE_WRITING || stale || known.kind !== 'ok');
  if (write)
    await writeJsonAtomic(
      historySizesFile(paths),
      historySizesSchema,
      { version: 1, runs: Object.fromEntries(sizes) },
      { compact: true },
    );
  const gone = new Set(removed);
  const runs = listed.runs.filter((r) => !gone.has(r));
  return {
    bytes,
    removed,
    failed,
    listing: { newest: runs.slice(-NEWEST_RUNS_KEPT), tmpFiles: listed.tmpFiles },
    known: {
      runs: runs.length,
      bytes,
      newest: runs.slice(-NEWEST_RUNS_KEPT),
      unsaved: write ? [] : runs.filter((r) => !saved.has(r)).map((r) => [r, sizes.get(r) ?? 0] as const),
    },
  };
}

/**
 * The rotation from a current tally: its folders and bytes, plus the folders it had not measured
 * yet (the last tick's own, complete now). Null when the full rotation must run instead: history
 * is above the cap (which folders go needs every size), or enough sizes wait to be saved.
 */
function fromTally(paths: WorkspacePaths, tally: HistoryTally, maxBytes: number): Rotation | null {
  if (tally.unsaved.length + tally.unmeasured.length >= MEASURED_BEFORE_WRITING) return null;
  // Only real folders are measured (a symbolic link is never followed out of history).
  const folders = tally.unmeasured.map((run) => join(paths.historyDir, run));
  if (folders.some((folder) => statOrNull(folder)?.isDirectory() !== true)) return null;
  const measured = tally.unmeasured.map((run, i) => [run, folderSizeBytes(folders[i] as string)] as const);
  const bytes = measured.reduce((sum, [, size]) => sum + size, tally.bytes);
  if (bytes > maxBytes) return null;
  return {
    bytes,
    removed: [],
    failed: [],
    // No temp file: one in history's folder would have changed its stamp.
    listing: { newest: tally.newest, tmpFiles: [] },
    known: { runs: tally.runs, bytes, newest: tally.newest, unsaved: [...tally.unsaved, ...measured] },
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
