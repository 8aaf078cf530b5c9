import { lstat, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
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

/** Run folders, oldest first: run ids begin with their UTC start time (tick-record.ts). */
export async function historyRuns(paths: WorkspacePaths): Promise<string[]> {
  const entries = await readdir(paths.historyDir, { withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isDirectory() && !OWN_CAP_FOLDERS.has(e.name))
    .map((e) => e.name)
    .sort();
}

export interface Rotation {
  /** Bytes of history after the rotation. */
  readonly bytes: number;
  /** Run folders deleted (oldest first). */
  readonly removed: string[];
  /** Run folders that had to go but could not be deleted. */
  readonly failed: string[];
}

/**
 * Brings history under `maxBytes` by deleting the oldest run folders. Sizes come from
 * sizes.json; only folders it does not know yet are measured (normally the previous run's). With
 * `apply: false` nothing is deleted or written: the result says what a rotation would do.
 */
export async function rotateHistory(
  paths: WorkspacePaths,
  maxBytes: number,
  apply: boolean,
): Promise<Rotation> {
  const runs = await historyRuns(paths);
  const known = await readJsonValidated(historySizesFile(paths), historySizesSchema);
  const before = known.kind === 'ok' ? known.value.runs : {};
  const sizes = new Map<string, number>();
  for (const run of runs) sizes.set(run, before[run] ?? (await folderSizeBytes(join(paths.historyDir, run))));
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
  if (apply && (removed.length > 0 || runs.some((r) => before[r] === undefined) || known.kind !== 'ok'))
    await writeJsonAtomic(historySizesFile(paths), historySizesSchema, {
      version: 1,
      runs: Object.fromEntries(sizes),
    });
  return { bytes, removed, failed };
}

/** Total bytes under a folder; symlinks count as themselves and are never followed. */
export async function folderSizeBytes(dir: string): Promise<number> {
  let total = 0;
  const pending = [dir];
  while (pending.length > 0) {
    const current = pending.pop() as string;
    const entries = await readdir(current, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const full = join(current, entry.name);
      if (entry.isDirectory()) pending.push(full);
      else total += (await lstat(full).catch(() => null))?.size ?? 0;
    }
  }
  return total;
}
