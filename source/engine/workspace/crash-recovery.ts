import { statSync } from 'node:fs';
import { readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { z } from 'zod';
import { blockedFileSchema } from '../protocol/blocked.js';
import { inflightSchema } from '../protocol/inflight.js';
import { reportSchema } from '../protocol/report.js';
import { workspaceStateSchema } from '../protocol/state.js';
import { taskSchema } from '../protocol/task.js';
import { workflowFileSchema } from '../protocol/workflow.js';
import { readJsonValidated } from './atomic-write.js';
import { type HistoryListing, listHistory, NEWEST_RUNS_KEPT } from './history.js';
import type { WorkspacePaths } from './paths.js';

/**
 * Crash artifacts (seed 000 §13, A1 row 6). Stale `*.tmp` files are removed (we hold the lock, so
 * none of them is being written); then every runner-owned JSON file must validate. A corrupt file
 * blocks the run: resetting it would silently forget spent budget.
 */

/**
 * Only a run killed mid-write leaves a temp file, in its own history folder, and the lock makes
 * that run the newest one when the next run starts here (run ids begin with their start time).
 * The newest few folders (NEWEST_RUNS_KEPT) are looked at (a clock set back still lands there); an
 * older leftover would be an unused file, never read as data. Thousands of old runs are not listed
 * every tick.
 *
 * `history` is history's folder as the rotation just saw it (listed, or from the last tick's tally:
 * issue 17); without it the folder is listed here. The lock is held, so no run adds a folder or a
 * temp file there in between.
 */
export async function listStaleTmpFiles(paths: WorkspacePaths, history?: HistoryListing): Promise<string[]> {
  const listing = history ?? (await listHistory(paths));
  const folders = [
    paths.dir,
    ...listing.newest.slice(-NEWEST_RUNS_KEPT).map((run) => join(paths.historyDir, run)),
  ];
  // lock.json temp files belong to a run that may be acquiring the lock right now: never touched.
  const isStale = (name: string) => name.endsWith('.tmp') && !name.startsWith('lock.json.');
  const found = listing.tmpFiles.filter(isStale).map((name) => join(paths.historyDir, name));
  // Side by side: 21 listings awaited one after the other were about 8 ms of a tick's preflight.
  const listed = await Promise.all(
    folders.map(async (folder) => ({ folder, names: await readdir(folder).catch(() => [] as string[]) })),
  );
  for (const { folder, names } of listed)
    for (const name of names) if (isStale(name)) found.push(join(folder, name));
  return found.sort();
}

export async function removeStaleTmpFiles(
  paths: WorkspacePaths,
  history?: HistoryListing,
): Promise<string[]> {
  const stale = await listStaleTmpFiles(paths, history);
  for (const file of stale) await unlink(file).catch(() => undefined);
  return stale;
}

interface RunnerFile {
  readonly path: string;
  readonly schema: z.ZodType;
  readonly required: boolean;
}

export interface CorruptFile {
  readonly file: string;
  readonly reason: string;
}

/** The runner's JSON files preflight's row 6 validates. */
function runnerFiles(paths: WorkspacePaths): RunnerFile[] {
  return [
    { path: paths.state, schema: workspaceStateSchema, required: true },
    { path: paths.task, schema: taskSchema, required: false },
    { path: paths.report, schema: reportSchema, required: false },
    { path: paths.blocked, schema: blockedFileSchema, required: false },
    { path: paths.inflight, schema: inflightSchema, required: false },
    { path: paths.workflow, schema: workflowFileSchema, required: false },
  ];
}

/**
 * How many bytes row 6 will parse: each file's JSON.parse and schema check hold the event loop
 * for as long as they take. One that cannot be stat'ed counts as none (row 6 says why).
 */
export function runnerFilesBytes(paths: WorkspacePaths): number {
  let total = 0;
  for (const file of runnerFiles(paths)) {
    try {
      total += statSync(file.path).size;
    } catch {
      // missing or unreadable: row 6 reports it
    }
  }
  return total;
}

export async function findCorruptRunnerFiles(paths: WorkspacePaths): Promise<CorruptFile[]> {
  const files = runnerFiles(paths);
  const problems: CorruptFile[] = [];
  // Read side by side (each read is several awaited calls); reported in the table's order.
  const reads = await Promise.all(
    files.map(async (file) => ({ file, read: await readJsonValidated(file.path, file.schema) })),
  );
  for (const { file, read } of reads) {
    const name = `${paths.relDir}/${file.path.slice(paths.dir.length + 1)}`;
    if (read.kind === 'invalid') problems.push({ file: name, reason: read.reason });
    if (read.kind === 'missing' && file.required) problems.push({ file: name, reason: 'missing' });
  }
  return problems;
}
