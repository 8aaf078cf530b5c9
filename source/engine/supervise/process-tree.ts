import { readdirSync, readFileSync } from 'node:fs';

/**
 * Finding and ending every process a child started. The child runs in its own process group, but
 * a tool may put grandchildren in groups of their own; on Linux /proc tells us the whole tree.
 */

export function descendantsOf(rootPid: number): number[] {
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
