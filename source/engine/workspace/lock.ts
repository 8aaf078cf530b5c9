import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { type LockFile, lockFileSchema } from '../protocol/lock.js';
import { describeZodError } from '../protocol/model-json.js';
import { jsonErrorWhere, randomHex, readJsonValidated } from './atomic-write.js';
import { currentBootId, isProcessAlive, processStartTicks } from './boot-id.js';

/**
 * The workspace lock (seed 000 §7 LOCK, §13). The file is created exclusively with its whole
 * content (written to a temp file, then hard-linked to the lock name, which fails if it exists),
 * so nobody ever reads a half-written lock. A lock is reclaimed only when its holder is provably
 * gone: another boot, a dead pid, or a pid now owned by a different process.
 */

export interface HeldLock {
  readonly info: LockFile;
  release(): Promise<void>;
}

export type LockAttempt =
  | { ok: true; lock: HeldLock; reclaimed: LockFile | null }
  | { ok: false; detail: string };

export async function acquireLock(lockPath: string, command: string): Promise<LockAttempt> {
  const info: LockFile = {
    pid: process.pid,
    started_at: new Date().toISOString(),
    boot_id: currentBootId(),
    hostname: hostname(),
    pid_start_ticks: processStartTicks(process.pid),
    command: command.slice(0, 200),
  };
  const first = await tryCreate(lockPath, info);
  if (first === 'created') return { ok: true, lock: heldLock(lockPath, info), reclaimed: null };

  const existing = await readLockText(lockPath);
  if (existing.kind === 'missing') {
    // Released between our attempt and our read: one more try, no loop.
    const again = await tryCreate(lockPath, info);
    if (again === 'created') return { ok: true, lock: heldLock(lockPath, info), reclaimed: null };
    return { ok: false, detail: 'lock.json appeared again while acquiring it; another run is starting' };
  }
  if (existing.kind === 'invalid') {
    return {
      ok: false,
      detail: `lock.json exists but is unreadable (${existing.reason}); cannot tell whether its holder is alive`,
    };
  }
  const verdict = staleness(existing.value);
  if (verdict.stale === false) return { ok: false, detail: verdict.why };
  if (!(await removeStale(lockPath, existing.text, info, 0)))
    return { ok: false, detail: 'another run reclaimed the stale lock first' };
  const retry = await tryCreate(lockPath, info);
  if (retry === 'created') return { ok: true, lock: heldLock(lockPath, info), reclaimed: existing.value };
  return { ok: false, detail: 'another run reclaimed the stale lock first' };
}

/** A token may itself be left by a reclaimer that died; that nesting is bounded. */
const MAX_TOKEN_DEPTH = 2;

/**
 * Removes the stale lock whose exact text is `staleText`, with one winner by construction: only the
 * run that exclusively creates the reclaim token named after that very lock may delete it, and it
 * re-reads the lock after winning (a slower run may win the token after the first winner already
 * replaced the lock; it then finds other text and backs off). No step ever puts a lock back, so
 * no window exists where a live lock is missing (the flaw of the earlier rename-and-restore).
 * A token whose holder died is reclaimed the same way, one level deeper.
 */
async function removeStale(path: string, staleText: string, me: LockFile, depth: number): Promise<boolean> {
  // node:crypto loads here, not at import: `relais status` inspects the lock and never writes it.
  const { createHash } = await import('node:crypto');
  const token = `${path}.reclaim-${createHash('sha256').update(staleText).digest('hex').slice(0, 16)}`;
  let won = (await tryCreate(token, me)) === 'created';
  if (!won && depth < MAX_TOKEN_DEPTH) {
    const holder = await readLockText(token);
    if (holder.kind === 'ok' && staleness(holder.value).stale) {
      if (await removeStale(token, holder.text, me, depth + 1))
        won = (await tryCreate(token, me)) === 'created';
    }
  }
  if (!won) return false;
  try {
    const current = await readFile(path, 'utf8').catch(() => null);
    if (current !== staleText) return false;
    await unlink(path);
    return true;
  } finally {
    await unlink(token).catch(() => undefined);
  }
}

type LockRead =
  | { kind: 'missing' }
  | { kind: 'invalid'; reason: string }
  | { kind: 'ok'; value: LockFile; text: string };

/** The lock with its exact text: the text is the identity a reclaim is about. */
async function readLockText(path: string): Promise<LockRead> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    return { kind: 'invalid', reason: `unreadable: ${(error as Error).message}` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { kind: 'invalid', reason: `not JSON: ${jsonErrorWhere(text, error as Error)}` };
  }
  const parsed = lockFileSchema.safeParse(value);
  if (!parsed.success) return { kind: 'invalid', reason: describeZodError(parsed.error) };
  return { kind: 'ok', value: parsed.data, text };
}

/** Read-only view used by `relais status` and `--preflight`: would a run get the lock now? */
export async function inspectLock(
  lockPath: string,
): Promise<{ held: false } | { held: true; detail: string; info: LockFile | null }> {
  const existing = await readJsonValidated(lockPath, lockFileSchema);
  if (existing.kind === 'missing') return { held: false };
  if (existing.kind === 'invalid')
    return { held: true, detail: `lock.json is unreadable (${existing.reason})`, info: null };
  const verdict = staleness(existing.value);
  return verdict.stale ? { held: false } : { held: true, detail: verdict.why, info: existing.value };
}

function staleness(lock: LockFile): { stale: true } | { stale: false; why: string } {
  // Another host (a shared filesystem): its boot id and pids say nothing here, so never reclaim.
  if (lock.hostname !== hostname()) {
    return {
      stale: false,
      why: `held by pid ${lock.pid} on another host (${lock.hostname}) since ${lock.started_at}`,
    };
  }
  if (lock.boot_id !== currentBootId()) return { stale: true };
  if (!isProcessAlive(lock.pid)) return { stale: true };
  const ticks = processStartTicks(lock.pid);
  if (lock.pid_start_ticks !== null && ticks !== null && ticks !== lock.pid_start_ticks)
    return { stale: true };
  return { stale: false, why: `held by running pid ${lock.pid} (${lock.command}) since ${lock.started_at}` };
}

async function tryCreate(lockPath: string, info: LockFile): Promise<'created' | 'exists'> {
  const tmp = `${lockPath}.${process.pid}.${await randomHex(3)}.tmp`;
  await writeFile(tmp, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o644 });
  try {
    await link(tmp, lockPath);
    return 'created';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return 'exists';
    throw error;
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

function heldLock(lockPath: string, info: LockFile): HeldLock {
  let released = false;
  return {
    info,
    async release() {
      if (released) return;
      released = true;
      // Only remove the lock if it is still ours (a human may have deleted and re-run meanwhile).
      const text = await readFile(lockPath, 'utf8').catch(() => null);
      if (text === null) return;
      try {
        const current = JSON.parse(text) as Partial<LockFile>;
        if (current.pid !== info.pid || current.started_at !== info.started_at) return;
      } catch {
        return;
      }
      await unlink(lockPath).catch(() => undefined);
    },
  };
}
