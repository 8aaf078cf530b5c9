import { existsSync, readdirSync, readFileSync } from 'node:fs';

/**
 * Finding and ending every process a child started. The child runs in its own process group, but
 * a tool may put grandchildren in groups of their own; on Linux /proc tells us the whole tree.
 */

export function descendantsOf(rootPid: number): number[] {
  return descendantsByChildren(rootPid) ?? descendantsByScan(rootPid);
}

/**
 * Linux's /proc/<pid>/task/<tid>/children: a walk of the tree alone, whatever else runs on the
 * machine. The scan of every process below cost 60 ms with 1,100 processes, four times a second
 * per running agent, on the event loop (a fleet worker's heartbeat waited behind it); this costs
 * a few reads per descendant. Null when the kernel does not offer the files.
 */
function descendantsByChildren(rootPid: number): number[] | null {
  if (!existsSync(`/proc/${rootPid}/task/${rootPid}/children`)) {
    // The root is gone (nothing to find) or the kernel lacks the files (the scan finds them).
    return existsSync(`/proc/${rootPid}`) && existsSync('/proc/self/task') ? null : [];
  }
  const found: number[] = [];
  const seen = new Set<number>([rootPid]);
  const pending = [rootPid];
  while (pending.length > 0) {
    const pid = pending.pop() as number;
    for (const child of childrenOf(pid)) {
      if (seen.has(child)) continue;
      seen.add(child);
      found.push(child);
      pending.push(child);
    }
  }
  return found;
}

function childrenOf(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const tid of tasks) {
    try {
      for (const word of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' '))
        if (word.trim()) out.push(Number(word));
    } catch {
      // The thread or process ended meanwhile.
    }
  }
  return out;
}

function descendantsByScan(rootPid: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const parent = parentPid(Number(name));
    if (parent === null) continue;
    const list = children.get(parent) ?? [];
    list.push(Number(name));
    children.set(parent, list);
  }
  const found: number[] = [];
  const pending = [rootPid];
  while (pending.length > 0) {
    const pid = pending.pop() as number;
    for (const child of children.get(pid) ?? []) {
      found.push(child);
      pending.push(child);
    }
  }
  return found;
}

function parentPid(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[1]);
  } catch {
    return null;
  }
}

/** Signals the process group led by `pgid` and every known descendant; never throws. */
export function signalTree(pgid: number, descendants: readonly number[], signal: NodeJS.Signals): void {
  trySignal(-pgid, signal);
  for (const pid of descendants) trySignal(pid, signal);
}

export function groupHasMembers(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function trySignal(target: number, signal: NodeJS.Signals): void {
  try {
    process.kill(target, signal);
  } catch {
    // Already gone: that is the goal.
  }
}

/** Fields of /proc/<pid>/stat after the command name, or null when the process is gone. */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/**
 * Blocks until every pid is dead (gone, or a zombie nobody needs to wait for), at most `maxMs`.
 * For the forced exit only (a second Ctrl-C), which cannot await: SIGKILL is delivered when the
 * target next runs, and on a loaded machine that can be after our own exit, so a process seen
 * right after the exit could still be running (issue 15: the flaky second SIGINT of relais loop).
 */
export function waitUntilDeadSync(pids: readonly number[], maxMs: number): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const deadline = Date.now() + maxMs;
  const living = () =>
    pids.filter((pid) => statFields(pid)?.[0] !== undefined && statFields(pid)?.[0] !== 'Z');
  while (living().length > 0 && Date.now() < deadline) Atomics.wait(pause, 0, 0, 5);
}

/** Start time of a process in clock ticks (field 22 of /proc/<pid>/stat), or null off Linux. */
export function processStartTicks(pid: number): string | null {
  return statFields(pid)?.[19] ?? null;
}

/** Running (not gone, not a zombie waiting to be reaped). */
function isRunning(pid: number): boolean {
  const state = statFields(pid)?.[0];
  return state !== undefined && state !== 'Z';
}

/** The environment variable that marks every process an unsandboxed child starts (see TreeWatch). */
export const PROCESS_MARK_VAR = 'RELAIS_PROCESS_MARK';

/** Running processes whose environment carries `mark` (ours to read: same user, or root). */
export function processesMarked(mark: string): number[] {
  const needle = Buffer.from(`${PROCESS_MARK_VAR}=${mark}\0`);
  const found: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`).includes(needle)) found.push(Number(name));
    } catch {
      // gone, or another user's
    }
  }
  return found;
}

/**
 * Remembers every descendant of a child while it runs, sampled a few times a second, so a
 * grandchild that left the process group (setsid, a daemon) is still known when the child ends.
 * Sampling alone misses a daemon that double-forks between two samples (CI saw it on a loaded
 * machine): it is re-parented to init at once. So the child also runs with a mark in its
 * environment, which such a daemon inherits, and `sweep` finds the marked processes at the end.
 * A process that clears its own environment escapes the mark; the sandbox's PID namespace does not
 * depend on it.
 */
export class TreeWatch {
  private readonly seen = new Map<number, string | null>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly rootPid: number,
    private readonly mark: string | null = null,
    intervalMs = 250,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  sample(): void {
    for (const pid of descendantsOf(this.rootPid)) this.remember(pid);
  }

  /** Samples, and adds every running process carrying the child's mark (one /proc scan). */
  sweep(): void {
    this.sample();
    if (this.mark !== null) for (const pid of processesMarked(this.mark)) this.remember(pid);
  }

  private remember(pid: number): void {
    if (!this.seen.has(pid)) this.seen.set(pid, processStartTicks(pid));
  }

  /** Known descendants still running as the same process (a reused pid is not ours). */
  survivors(): number[] {
    return [...this.seen]
      .filter(([pid, ticks]) => isRunning(pid) && processStartTicks(pid) === ticks)
      .map(([pid]) => pid);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** CPU time (clock ticks) of the agent's child processes: its tools at work, on Linux. */
export function toolCpuTicks(pgid: number): number {
  let total = 0;
  for (const pid of descendantsOf(pgid)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime and stime are fields 14 and 15 of /proc/<pid>/stat (11 and 12 after the name).
      total += Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
    } catch {
      // gone meanwhile
    }
  }
  return total;
}
