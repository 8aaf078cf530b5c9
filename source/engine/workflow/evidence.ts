import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Git } from '../judge/git.js';
import type { CircuitBreaker } from '../supervise/circuit-breaker.js';
import { toolCpuTicks } from '../supervise/process-tree.js';
import { readRepoFile } from '../workspace/safe-read.js';
import type { WorkflowContext } from './context.js';
import { TASKS_FILE } from './phase-helpers.js';
import { countCompleted, type PlanTask, parseTasks } from './tasks-file.js';

/**
 * Progress judged from evidence (issue 4), never from "is the tree dirty": snapshots of HEAD, the
 * worktree's changes (which paths, and what is in them), the task statuses and the CPU time of the
 * agent's tool processes are compared with the previous one. A change is progress, so an agent
 * that commits on its own, edits a file that was already dirty again, or works quietly inside a
 * long tool call is not stuck, and a tree that was dirty before the phase and stays the same is
 * no progress. A task newly `completed` in TASKS.md feeds stagnation.
 */

interface Snapshot {
  readonly fingerprint: string;
  readonly completed: number;
  /** The process group the CPU time was read from: only two reads of the same group compare. */
  readonly pgid: number | null;
  readonly toolCpuTicks: number;
}

/** The tree evidence is read from: the main worktree, or a parallel lane's (issue 19). */
export interface EvidenceTree {
  readonly root: string;
  readonly git: Pick<Git, 'run'>;
}

export function evidenceWatcher(
  ctx: WorkflowContext,
  breaker: CircuitBreaker | null,
  onTasks?: (tasks: PlanTask[]) => Promise<void>,
  tree?: EvidenceTree,
): EvidenceWatch {
  return treeEvidenceWatcher(tree ?? { root: ctx.setup.facts.root, git: ctx.setup.git }, breaker, onTasks);
}

export type EvidenceWatch = (pgid: number | null, options?: { readonly baseline?: boolean }) => Promise<void>;

/** The same watch over any tree (a lane's, or the corpus replay's: test/corpus). */
export function treeEvidenceWatcher(
  tree: EvidenceTree,
  breaker: CircuitBreaker | null,
  onTasks?: (tasks: PlanTask[]) => Promise<void>,
): EvidenceWatch {
  let last: Snapshot | null = null;
  const hashes: ContentHashes = new Map();
  return async (pgid, options) => {
    const { snapshot, tasks } = await takeSnapshot(tree, pgid, hashes);
    if (last !== null && !options?.baseline) {
      const cpuMoved =
        snapshot.pgid !== null && snapshot.pgid === last.pgid && snapshot.toolCpuTicks > last.toolCpuTicks;
      if (snapshot.fingerprint !== last.fingerprint || cpuMoved) breaker?.onProgress();
      if (snapshot.completed > last.completed) breaker?.onTaskCompleted();
      if (tasks && snapshot.completed !== last.completed) await onTasks?.(tasks);
    }
    last = snapshot;
  };
}

async function takeSnapshot(
  { root, git }: EvidenceTree,
  pgid: number | null,
  hashes: ContentHashes,
): Promise<{ snapshot: Snapshot; tasks: PlanTask[] | null }> {
  const [head, status, text] = await Promise.all([
    git.run(['rev-parse', 'HEAD']),
    git.run(['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignore-submodules=dirty']),
    readRepoFile(root, TASKS_FILE, 4 * 1024 * 1024).then((r) => (r.ok ? r.text : '')),
  ]);
  const parsed = parseTasks(text);
  const tasks = parsed.ok ? parsed.tasks : null;
  const fingerprint = createHash('sha1').update(head.stdout).update(status.stdout).update(text);
  await fingerprintContents(fingerprint, root, changedPaths(status.stdout.toString('utf8')), hashes);
  return {
    snapshot: {
      fingerprint: fingerprint.digest('hex'),
      completed: tasks ? countCompleted(tasks) : 0,
      pgid,
      toolCpuTicks: pgid === null ? 0 : toolCpuTicks(pgid),
    },
    tasks,
  };
}

/** The paths of `git status --porcelain=v1 -z`: changed, added, deleted, untracked (not a rename's old name). */
export function changedPaths(porcelain: string): string[] {
  const paths: string[] = [];
  const entries = porcelain.split('\0');
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as string;
    if (entry.length < 4) continue;
    paths.push(entry.slice(3));
    if (entry[0] === 'R' || entry[0] === 'C') i++; // the next entry is the old name
  }
  return paths;
}

/**
 * What the changed paths hold, so editing a file that is already dirty or untracked is seen: each
 * regular file's content is hashed, read in chunks (bounded memory); past the per-file or
 * per-snapshot budget, or past MAX_FILES paths, its size and modification time stand in for it.
 * Symlinks count by their target, never followed; FIFOs and devices are never opened.
 */
const MAX_FILES = 5000;
const MAX_HASHED_FILE = 8 * 1024 * 1024;
const MAX_HASHED_TOTAL = 64 * 1024 * 1024;
const CHUNK = 64 * 1024;

/**
 * The last content hash of each path with the stat it was taken under: a file whose inode, size,
 * mtime and ctime have not moved is not read again every few seconds.
 */
type ContentHashes = Map<string, { readonly stamp: string; readonly hash: string }>;

async function fingerprintContents(
  into: ReturnType<typeof createHash>,
  root: string,
  paths: string[],
  hashes: ContentHashes,
): Promise<void> {
  let budget = MAX_HASHED_TOTAL;
  const chunk = Buffer.alloc(CHUNK);
  const current = new Set(paths.slice(0, MAX_FILES));
  // Only the paths still changed are remembered: the map stays as small as the dirty tree.
  for (const path of hashes.keys()) if (!current.has(path)) hashes.delete(path);
  for (const path of current) {
    const full = join(root, path);
    const stat = await lstat(full, { bigint: true }).catch(() => null);
    let mark = 'missing';
    if (stat?.isSymbolicLink()) mark = `link ${await readlink(full).catch(() => '')}`;
    else if (stat && !stat.isFile()) mark = `other ${stat.mode}`;
    else if (stat) {
      const size = Number(stat.size);
      const stamp = `${stat.ino} ${size} ${stat.mtimeNs} ${stat.ctimeNs}`;
      const known = hashes.get(path);
      let hashed = known?.stamp === stamp ? known.hash : null;
      if (hashed === null && size <= MAX_HASHED_FILE && size <= budget) {
        hashed = await contentHash(full, size, chunk);
        if (hashed !== null) {
          budget -= size;
          hashes.set(path, { stamp, hash: hashed });
        }
      }
      mark = `${stat.mode} ${size} ${hashed ?? `mtime ${stat.mtimeNs}`}`;
    }
    into.update(`${path}\0${mark}\0`);
  }
}

async function contentHash(path: string, size: number, chunk: Buffer): Promise<string | null> {
  const flags = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
  const handle = await open(path, flags).catch(() => null);
  if (!handle) return null;
  try {
    // Replaced by something else since lstat (a FIFO, a device): not read.
    if (!(await handle.stat()).isFile()) return null;
    const hash = createHash('sha1');
    for (let left = size; left > 0; ) {
      const { bytesRead } = await handle.read(chunk, 0, Math.min(chunk.length, left), null);
      if (bytesRead === 0) break;
      hash.update(chunk.subarray(0, bytesRead));
      left -= bytesRead;
    }
    return hash.digest('hex');
  } catch {
    return null;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** The agent's tools at work, in CPU time (kept here for the workflow's callers). */
export { toolCpuTicks };
