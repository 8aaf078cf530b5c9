import { lstatSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processStartTicks } from '../supervise/process-tree.js';

/**
 * The temp folders a runner makes for its agents (a sandboxed process's scratch HOME, with its
 * private copies of the CLIs' logins; a scope hook's rules) are removed when each process ends.
 * A runner that is killed (SIGKILL, the OOM killer) cannot remove them: before this, every such
 * kill left them in the temp folder until the next reboot, login copies included (the test suite
 * alone left about 40 a run). So each folder's name says whose it is, and a runner sweeps, once,
 * those of runners that are gone.
 *
 * Whose: the PID namespace, the pid and the pid's start time (field 22 of /proc/<pid>/stat). A
 * folder is removed only when its owner is provably gone, the way a stale lock is reclaimed
 * (workspace/lock.ts): same PID namespace (a temp folder shared with a container names pids that
 * mean nothing here), and that pid no longer running or now another process (another start
 * time). It must also be a real folder (never a symbolic link) of this user. Without /proc the
 * owner cannot be checked: nothing is swept.
 */

export type ScratchKind = 'sandbox' | 'scope-hook';

/** `relais-<kind>-<pid namespace>.<pid>.<start ticks>-` (mkdtemp adds six characters). */
export function scratchPrefix(kind: ScratchKind): string {
  return `relais-${kind}-${ownerTag()}-`;
}

const LEFTOVER = /^relais-(?:sandbox|scope-hook)-(\d+)\.(\d+)\.(\d+)-[A-Za-z0-9]{6}$/;

let tag: string | null = null;

function ownerTag(): string {
  tag ??= `${pidNamespace() ?? 'x'}.${process.pid}.${processStartTicks(process.pid) ?? 'x'}`;
  return tag;
}

/** The inode of this process's PID namespace (`pid:[4026531836]`), or null without /proc. */
function pidNamespace(): string | null {
  try {
    return /^pid:\[(\d+)\]$/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? null;
  } catch {
    return null;
  }
}

/** Whether a folder named `name` belongs to a runner that is gone (see above). */
export function ownerIsGone(name: string): boolean {
  const owner = LEFTOVER.exec(name);
  const namespace = pidNamespace();
  if (!owner || namespace === null || owner[1] !== namespace) return false;
  const pid = Number(owner[2]);
  if (pid === process.pid) return false;
  const ticks = processStartTicks(pid);
  return ticks === null || ticks !== owner[3];
}

/**
 * Removes the scratch folders of runners that are gone from `dir` (the temp folder); returns
 * their names. Never throws: a folder that cannot be read or removed is left.
 */
export function removeLeftoverScratch(dir: string = tmpdir(), names?: readonly string[]): string[] {
  const removed: string[] = [];
  let entries: readonly string[];
  try {
    entries = names ?? readdirSync(dir);
  } catch {
    return removed;
  }
  const uid = process.getuid?.();
  for (const name of entries) {
    if (!ownerIsGone(name)) continue;
    const path = join(dir, name);
    try {
      const stat = lstatSync(path);
      if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) continue;
      // rmSync removes a symbolic link inside, never what it points to.
      rmSync(path, { recursive: true, force: true });
      removed.push(name);
    } catch {
      // Gone meanwhile, or not ours to remove: left as it is.
    }
  }
  return removed;
}

let swept: Promise<string[]> | null = null;

/**
 * The sweep, once per process, off the caller's path: the temp folder is listed on the thread
 * pool (a shared /tmp can hold thousands of entries), and only names that match are looked at.
 */
export function sweepLeftoverScratchOnce(): Promise<string[]> {
  swept ??= readdir(tmpdir())
    .then((names) =>
      removeLeftoverScratch(
        tmpdir(),
        names.filter((name) => LEFTOVER.test(name)),
      ),
    )
    .catch(() => []);
  return swept;
}
