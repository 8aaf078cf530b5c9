import type { BigIntStats } from 'node:fs';
import { join } from 'node:path';
import { statOrNull } from '../judge/stat-or-null.js';
import { type HistoryTally, historyTallySchema } from '../protocol/history-tally.js';
import { readJsonValidated, writeJsonAtomic } from './atomic-write.js';
import { TRANSCRIPTS_FOLDER, type WorkspacePaths } from './paths.js';

/**
 * relais/history-tally.json (issue 17): what a tick knew of relais/history when it ended, so the
 * next one need not list thousands of run folders and read their sizes to learn that nothing but
 * its predecessor's folder was added.
 *
 * Why trusting it cannot miss a folder added or deleted between ticks:
 * - Adding, deleting or renaming an entry of a folder sets that folder's ctime to the current time
 *   (POSIX), and ctime cannot be set back by any call (unlike mtime). The tally is trusted only
 *   when history's folder has the same device, inode, ctime, mtime and link count as when written.
 * - A change in the same clock tick as the stamp would keep the ctime ("racy", as git says of its
 *   index). The stamp is kept only when a file the tick wrote after its last change to history (its
 *   REPORT.json, the witness) has a later ctime on the same filesystem: the filesystem's clock had
 *   moved past history's stamp before the stamp was read, so every later change gets a later time.
 *   Both stamps come from one clock, so this holds on a network mount with its own clock or a
 *   filesystem that stamps whole seconds; it assumes only that the clock is not set back.
 * - The tick's own changes are checked, not assumed. History's stamp is read right after the tick
 *   creates its own run folder, and the tally is kept only if the stamp at the end is the same: a
 *   folder created, deleted or renamed during the tick (the runner's first milestones folder, by
 *   hand, by a builder without the sandbox) means no tally. Between the rotation's look and the
 *   tick's own folder (preflight, under the lock, before any agent) only a folder added or removed
 *   is caught, by the link count (2 + subfolders, on ext4, xfs and tmpfs) that must be what the
 *   tally counts; a filesystem that does not count (btrfs) means no tally, and the next tick lists
 *   history.
 * - What is left: a folder renamed (or one deleted and one added) by another process while
 *   preflight runs under the lock, or in the same clock tick as the tick's own folder on a
 *   filesystem with coarse stamps. A tick lists history at least every MEASURED_BEFORE_WRITING
 *   ticks (`unsaved` fills up), and only a current tally's sizes are ever saved, so what that can
 *   get wrong (history's byte count, which folders rotation deletes first, which run folders the
 *   temp-file scan looks into: nothing the judge reads) lasts at most that long.
 */
export function historyTallyFile(paths: WorkspacePaths): string {
  return join(paths.dir, 'history-tally.json');
}

/** What a tick knows of history after its rotation, kept by `keepHistoryTally` when it ends. */
export interface HistoryKnown {
  readonly runs: number;
  readonly bytes: number;
  readonly newest: readonly string[];
  readonly unsaved: ReadonlyArray<readonly [string, number]>;
}

/** History's folder as lstat sees it: what the tally is trusted for. */
export type HistoryStamp = HistoryTally['folder'];
type Stamp = HistoryStamp;

/** The tick's own run folder, and history's stamp right after it was created. */
export interface OwnRun {
  readonly run: string;
  readonly stamp: HistoryStamp;
}

/**
 * Right after the tick created its own run folder: what keepHistoryTally compares with at the end.
 * No witness here (the end has one): a change by another process in the same clock tick as the
 * tick's own folder, before any agent has started, keeps this stamp on a filesystem with coarse
 * stamps. Asking the clock to move first would cost up to a clock tick of waiting on every tick,
 * and on kernels without fine-grained stamps would lose most ticks their tally; what such a change
 * can get wrong is bounded as the module comment says.
 */
export function ownRunCreated(paths: WorkspacePaths, run: string): OwnRun | null {
  const stat = statOrNull(paths.historyDir);
  return stat?.isDirectory() ? { run, stamp: stampOf(stat) } : null;
}

function stampOf(stat: BigIntStats): Stamp {
  return {
    dev: String(stat.dev),
    ino: String(stat.ino),
    mtime_ns: String(stat.mtimeNs),
    ctime_ns: String(stat.ctimeNs),
    nlink: String(stat.nlink),
  };
}

const sameStamp = (a: Stamp, b: Stamp) =>
  a.dev === b.dev &&
  a.ino === b.ino &&
  a.mtime_ns === b.mtime_ns &&
  a.ctime_ns === b.ctime_ns &&
  a.nlink === b.nlink;

/**
 * The tally, when history's folder is still as it was when the tally was written; null for a stale,
 * missing or invalid one. A stale tally is worth nothing, its sizes included: saved into
 * sizes.json they would be trusted for good, and a forged one could say anything.
 */
export async function readCurrentTally(paths: WorkspacePaths): Promise<HistoryTally | null> {
  const read = await readJsonValidated(historyTallyFile(paths), historyTallySchema);
  if (read.kind !== 'ok') return null;
  const stat = statOrNull(paths.historyDir);
  return stat?.isDirectory() === true && sameStamp(stampOf(stat), read.value.folder) ? read.value : null;
}

/**
 * At the end of a tick: `known` (from this tick's rotation) plus the tick's own run folder, with
 * history's stamp. `witness` is a file the tick wrote after its last change to history's folder.
 * Returns whether it was written; when it is not, the next tick lists history.
 */
export async function keepHistoryTally(
  paths: WorkspacePaths,
  known: HistoryKnown,
  own: OwnRun | null,
  newestKept: number,
  witness: string,
): Promise<boolean> {
  if (own === null) return false;
  // The witness first: its stamp must be read before history's, which it must come after.
  const clock = statOrNull(witness);
  const stat = statOrNull(paths.historyDir);
  if (!clock || !stat?.isDirectory() || clock.dev !== stat.dev || clock.ctimeNs <= stat.ctimeNs) return false;
  const stamp = stampOf(stat);
  if (!sameStamp(stamp, own.stamp) || statOrNull(join(paths.historyDir, own.run))?.isDirectory() !== true)
    return false;
  const runs = known.runs + 1;
  // The transcripts' folder is no run to the rotation (history.ts, OWN_CAP_FOLDERS).
  const agents = statOrNull(join(paths.historyDir, TRANSCRIPTS_FOLDER))?.isDirectory() === true ? 1 : 0;
  if (stat.nlink !== BigInt(2 + runs + agents)) return false;
  const newest = [...known.newest, own.run].sort().slice(-newestKept);
  await writeJsonAtomic(
    historyTallyFile(paths),
    historyTallySchema,
    {
      version: 1,
      folder: stamp,
      runs,
      bytes: known.bytes,
      newest,
      unmeasured: [own.run],
      unsaved: known.unsaved.map(([run, size]) => [run, size] as [string, number]),
    },
    // A cache, validated on read: lost or torn by a crash, it only means one listing more.
    { compact: true, durable: false },
  );
  return true;
}
