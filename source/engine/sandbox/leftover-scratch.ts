import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processesMarkedByPid, processStartTicksOrGone } from '../supervise/process-tree.js';
import { currentBootId } from '../workspace/boot-id.js';

/**
 * The temp folders a runner makes (a sandboxed agent's scratch HOME, with its private copies of
 * the CLIs' logins; a scope hook's rules; the judge's copies of the index and of the tree) are
 * removed when each is done.
 * A runner that is killed (SIGKILL, the OOM killer) cannot remove them: before this, every such
 * kill left them in the temp folder until the next reboot, login copies included (the test suite
 * alone left about 40 a run). So each folder's name says whose it is, and a runner sweeps, once,
 * those of runners that are gone.
 *
 * Whose: a hash of the machine's boot and the runner's PID and time namespaces, then its pid and
 * the pid's start time (field 22 of /proc/<pid>/stat, which both namespaces shape). A folder is
 * removed only when its owner is provably gone, the way a stale lock is reclaimed
 * (workspace/lock.ts):
 * - same boot and namespaces (a temp folder shared with another host or a container names pids
 *   that mean nothing here), and a /proc that is this PID namespace's own;
 * - that pid no longer running, or now another process (another start time); any other failure
 *   to read it counts as running;
 * - no process still carries a mark the gone runner gave (`RELAIS_PROCESS_MARK=<pid>.`): a
 *   sandboxed process that outlived its runner can still write in its scratch folder, and could
 *   swap a folder for a link while it is deleted;
 * - a real folder (never a link) of this user, deleted by the system's GNU `rm -rf
 *   --one-file-system` (never one found on PATH; `systemRemover`), which walks by open folders
 *   rather than by path, so a folder swapped for a link mid-way is not followed (Node's recursive
 *   rm would follow it); without GNU's rm nothing is deleted.
 * Without a /proc of its own the owner cannot be checked: nothing is named for it, nothing swept.
 */

/** Every temp folder the runner makes: an agent's scratch, a scope hook, the judge's index and tree copies, codex's helper link, the fleet's gate and tree scratch. */
const KINDS = ['sandbox', 'scope-hook', 'judge', 'verified', 'codex-bin', 'gate', 'tree'] as const;
export type ScratchKind = (typeof KINDS)[number];

/** `relais-<kind>-<machine and namespaces>.<pid>.<start ticks>-` (mkdtemp adds six characters). */
export function scratchPrefix(kind: ScratchKind): string {
  return `relais-${kind}-${ownerTag()}-`;
}

const LEFTOVER = new RegExp(`^relais-(?:${KINDS.join('|')})-([0-9a-f]{8})\\.(\\d+)\\.(\\d+)-[A-Za-z0-9]{6}$`);

let tag: string | null = null;

function ownerTag(): string {
  if (tag === null) {
    const here = placeHash();
    const ticks = here === null ? null : processStartTicksOrGone(process.pid);
    tag =
      here !== null && ticks !== null && ticks !== 'gone'
        ? `${here}.${process.pid}.${ticks}`
        : `x.${process.pid}.x`;
  }
  return tag;
}

let place: string | null | undefined;

/**
 * The boot and the PID and time namespaces this process sees, hashed (FNV-1a, 8 hex digits: a
 * name stays short, HOME and TMPDIR sit inside it and Unix socket paths end at 108 bytes); read
 * once, none of them changes while the process lives. Null without a /proc of this PID namespace
 * (one mounted for another shows another pid for "self").
 */
function placeHash(): string | null {
  if (place === undefined) place = readPlace();
  return place;
}

function readPlace(): string | null {
  try {
    if (readlinkSync('/proc/self') !== String(process.pid)) return null;
    const pidNs = readlinkSync('/proc/self/ns/pid');
    // Kernels before 5.6 have no time namespaces: one clock for all.
    let timeNs = 'none';
    try {
      timeNs = readlinkSync('/proc/self/ns/time');
    } catch {}
    let hash = 0x811c9dc5;
    for (const char of `${currentBootId()}|${pidNs}|${timeNs}`)
      hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193);
    return (hash >>> 0).toString(16).padStart(8, '0');
  } catch {
    return null;
  }
}

/**
 * Whether a folder named `name` belongs to a runner that is gone (see above). `leftAlive` says
 * whether a process that runner marked still runs (one /proc scan: a sweep asks once per pid).
 */
export function ownerIsGone(
  name: string,
  leftAlive: (pid: number) => boolean = (pid) => processesMarkedByPid(pid).length > 0,
): boolean {
  const owner = LEFTOVER.exec(name);
  if (!owner || owner[1] !== placeHash()) return false;
  const pid = Number(owner[2]);
  if (pid === process.pid) return false;
  const ticks = processStartTicksOrGone(pid);
  if (ticks === null) return false;
  return (ticks === 'gone' || ticks !== owner[3]) && !leftAlive(pid);
}

/** Deletes one folder, returning whether it is gone. */
export type FolderRemover = (path: string) => Promise<boolean>;

/** What the remover needs of the process port (injected by tests; loaded on first use). */
export type RunTool = (
  cmd: string,
  args: readonly string[],
) => Promise<{ exitCode: number | null; stdout: string }>;

/** The system's own tools, never ones found on PATH (a repository can put a folder of its own there). */
const SYSTEM_BIN = ['/usr/bin', '/bin'];

const runTool: RunTool = async (cmd, args) => {
  const { runProcess } = await import('../supervise/run-process.js');
  const ran = await runProcess({
    cmd,
    args,
    cwd: '/',
    env: { PATH: SYSTEM_BIN.join(':'), LC_ALL: 'C' },
    timeoutMs: 120_000,
  });
  return { exitCode: ran.exitCode, stdout: ran.stdoutTail };
};

/**
 * GNU `rm -rf --one-file-system`, by absolute path, once `rm --version` has said it is GNU's: its
 * walk goes through open folders (openat with O_NOFOLLOW, unlinkat), which another
 * implementation need not do. A folder it cannot delete (read-only subfolders, as a Go module
 * cache makes them, when not run as root) is made writable by GNU `chmod -R u+rwx` (which does not
 * follow links either) and deleted again.
 */
export function systemRemover(run: RunTool = runTool): FolderRemover {
  let gnu: Promise<{ rm: string; chmod: string } | null> | null = null;
  const tools = () => {
    gnu ??= (async () => {
      const dir = SYSTEM_BIN.find((bin) => existsSync(join(bin, 'rm')) && existsSync(join(bin, 'chmod')));
      if (!dir) return null;
      const version = await run(join(dir, 'rm'), ['--version']);
      return version.exitCode === 0 && version.stdout.startsWith('rm (GNU coreutils)')
        ? { rm: join(dir, 'rm'), chmod: join(dir, 'chmod') }
        : null;
    })().catch(() => null);
    return gnu;
  };
  return async (path) => {
    const found = await tools();
    if (!found) return false;
    const remove = () => run(found.rm, ['-rf', '--one-file-system', '--', path]);
    if ((await remove()).exitCode === 0) return true;
    await run(found.chmod, ['-R', 'u+rwx', '--', path]);
    return (await remove()).exitCode === 0;
  };
}

/**
 * Removes the scratch folders of runners that are gone from `dir` (the temp folder); resolves
 * with their names. Never rejects: a folder that cannot be read or removed is left.
 */
export async function removeLeftoverScratch(
  dir: string = tmpdir(),
  remove: FolderRemover = systemRemover(),
): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const uid = process.getuid?.();
  const removed: string[] = [];
  const alive = new Map<number, boolean>();
  const leftAlive = (pid: number) => {
    if (!alive.has(pid)) alive.set(pid, processesMarkedByPid(pid).length > 0);
    return alive.get(pid) === true;
  };
  for (const name of names) {
    if (!LEFTOVER.test(name) || !ownerIsGone(name, leftAlive)) continue;
    const path = join(dir, name);
    try {
      const stat = lstatSync(path);
      if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) continue;
      if (await remove(path)) removed.push(name);
    } catch {
      // Gone meanwhile, or not ours to remove: left as it is.
    }
  }
  return removed;
}

let swept: Promise<string[]> | null = null;

/**
 * The sweep, once per process, beside the caller's work: the temp folder is listed on the thread
 * pool (a shared /tmp can hold thousands of entries) and each folder deleted by its own `rm`.
 * Started by the first sandboxed process; a tick waits for it before it ends (and starts it, when
 * nothing sandboxed ran), so a run leaves nothing of a killed one behind it.
 */
export function sweepLeftoverScratchOnce(): Promise<string[]> {
  swept ??= removeLeftoverScratch().catch(() => []);
  return swept;
}

/**
 * Waits for the sweep at most `maxMs`: a tick's end (its verdict, its reports, its lock) does not
 * wait on a huge leftover. An `rm` still at work goes on; the process exits once it is done (a
 * forced exit ends it, and the rest of its folder is left to the next runner's sweep).
 */
export async function sweepLeftoverScratchWithin(maxMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, maxMs);
    timer.unref();
  });
  await Promise.race([sweepLeftoverScratchOnce(), limit]);
  clearTimeout(timer);
}
