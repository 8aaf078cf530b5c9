import { existsSync, readdirSync, readFileSync } from 'node:fs';

/**
 * Finding and ending every process a child started. The child runs in its own process group, but
 * a tool may put grandchildren in groups of their own; on Linux /proc tells us the whole tree.
 */

export function descendantsOf(rootPid: number, children?: Map<number, number[]>): number[] {
  if (children) return walkTree(rootPid, children);
  return descendantsByChildren(rootPid) ?? walkTree(rootPid, childrenMap());
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

/** The tree below `rootPid` in a map of every process's children (one scan of /proc). */
function walkTree(rootPid: number, children: Map<number, number[]>): number[] {
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

/** Every process's children, from one pass over /proc. */
function childrenMap(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return children;
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const parent = parentPid(Number(name));
    if (parent === null) continue;
    const list = children.get(parent) ?? [];
    list.push(Number(name));
    children.set(parent, list);
  }
  return children;
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

/** Signals each process by its pid (not its group); never throws. */
export function signalEach(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) trySignal(pid, signal);
}

/**
 * Whether a process of the group still runs. kill(0) also reaches zombies (exited, not yet reaped),
 * so when it does, /proc says whether any member is more than that: a sandbox's inner process
 * dies with bwrap and is re-parented to init, and where init reaps slowly (a container's or a VM's
 * process manager: 1.3 s seen) the group looked alive that long and every unsandboxed start
 * (the bwrap probe of each run) waited out its kill grace period (issue 17).
 */
export function groupHasMembers(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return true; // no /proc (not Linux): kill(0)'s answer stands
  }
  return entries.some((name) => {
    if (!/^\d+$/.test(name)) return false;
    const fields = statFields(Number(name));
    // Fields after the name: state, ppid, pgrp.
    return fields !== null && fields[2] === String(pgid) && fields[0] !== 'Z';
  });
}

/** Running: signalable and not a zombie (see groupHasMembers). Without /proc, kill(0) decides. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const fields = statFields(pid);
  return fields === null ? !existsSync('/proc/self') : fields[0] !== 'Z';
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
  const read = statFieldsOrError(pid);
  return Array.isArray(read) ? read : null;
}

/** The same fields, or the read's error code (ENOENT: no such process; EACCES, EMFILE...). */
function statFieldsOrError(pid: number): string[] | string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'EIO';
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

/**
 * The same, for deciding that a process is gone: 'gone' only when /proc has no such process,
 * null when it could not be read for another reason (too many open files, no permission).
 */
export function processStartTicksOrGone(pid: number): string | 'gone' | null {
  const read = statFieldsOrError(pid);
  if (!Array.isArray(read)) return read === 'ENOENT' || read === 'ESRCH' ? 'gone' : null;
  return read[19] ?? null;
}

/** Running (not gone, not a zombie waiting to be reaped). */
function isRunning(pid: number): boolean {
  const state = statFields(pid)?.[0];
  return state !== undefined && state !== 'Z';
}

/** The environment variable that marks every process a child starts (see TreeWatch). */
export const PROCESS_MARK_VAR = 'RELAIS_PROCESS_MARK';

/**
 * The prefix of every mark this runner gives: its pid and a random part, so that the next run's
 * crash recovery finds what a killed runner left alive (its record names this prefix) and never a
 * live runner's children that merely reuse the pid.
 */
export function runnerMark(): string {
  // Made on first use, with the global Web Crypto: `relais status` loads this file and starts no
  // process, and must not pay for node:crypto at start-up (issue 17).
  madeMark ??= `${process.pid}.${globalThis.crypto.randomUUID().slice(0, 8)}`;
  return madeMark;
}
let madeMark: string | null = null;

/** Running processes whose environment carries `mark` (ours to read: same user, or root). */
export function processesMarked(mark: string): number[] {
  return processesWithEnv(`${PROCESS_MARK_VAR}=${mark}\0`);
}

/**
 * Every process any child of this runner started, whatever its group or parent now (a setsid
 * daemon re-parented to init): their marks all begin with runnerMark() (run-process.ts).
 */
export function processesMarkedByThisRunner(): number[] {
  return processesMarkedByRunner(runnerMark());
}

/** The same for a runner that is gone (crash recovery reads its mark prefix from its record). */
export function processesMarkedByRunner(runnerMark: string): number[] {
  return processesWithEnv(`${PROCESS_MARK_VAR}=${runnerMark}-`);
}

/**
 * Running processes marked by any runner that had `pid` (its marks begin `<pid>.`): what a gone
 * runner started and is still alive, whatever its random part.
 */
export function processesMarkedByPid(pid: number): number[] {
  return processesWithEnv(`${PROCESS_MARK_VAR}=${pid}.`);
}

function processesWithEnv(entry: string): number[] {
  const needle = Buffer.from(entry);
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

/**
 * The agent process and its tools under a recorded process-group leader. Unsandboxed the leader is
 * the agent itself. In the sandbox it is bwrap, whose child is bwrap again (the init of the
 * sandbox's PID namespace): the agent is that init's first child, and every other process in the
 * sandbox is a tool, the orphans the init adopted included (a double-forked test server).
 */
export function agentTree(pgid: number): { readonly agent: number; readonly tools: number[] } {
  // The kernel's children files when it has them (a walk of this tree alone), else one scan.
  const scan = existsSync(`/proc/${pgid}/task/${pgid}/children`) ? null : childrenMap();
  const childrenOfPid = (pid: number) => (scan ? (scan.get(pid) ?? []) : childrenOf(pid));
  let top = pgid;
  for (let depth = 0; depth < 2 && commandName(top) === 'bwrap'; depth++) {
    const inner = childrenOfPid(top).find((pid) => commandName(pid) === 'bwrap');
    if (inner === undefined) break;
    top = inner;
  }
  const tools = descendantsOf(top, scan ?? undefined);
  if (commandName(top) !== 'bwrap') return { agent: top, tools };
  const byAge = [...childrenOfPid(top)].sort((a, b) => startOf(a) - startOf(b));
  const agent = byAge[0] ?? top;
  return { agent, tools: tools.filter((pid) => pid !== agent) };
}

function commandName(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return null;
  }
}

function startOf(pid: number): number {
  return Number(processStartTicks(pid) ?? Number.MAX_SAFE_INTEGER);
}

/**
 * CPU time (clock ticks) of the agent's tools (its child processes, in the sandbox every process
 * but the agent), on Linux: never the agent's own, so an agent busy on its own (streaming, a spin)
 * does not pass for tools at work.
 */
export function toolCpuTicks(pgid: number): number {
  let total = 0;
  for (const pid of agentTree(pgid).tools) {
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
