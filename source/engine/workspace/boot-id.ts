import { readFileSync } from 'node:fs';
import { hostname, uptime } from 'node:os';

/**
 * Identity of the running kernel, so a lock left before a reboot is known to be dead (seed 000 §13).
 * Linux gives a real boot id; elsewhere the boot time rounded to a minute stands in for it.
 */
export function currentBootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    const bootMinute = Math.round((Date.now() - uptime() * 1000) / 60_000);
    return `${hostname()}-boot-${bootMinute}`;
  }
}

/** Start time of a process in clock ticks (field 22 of /proc/<pid>/stat), or null off Linux. */
export function processStartTicks(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
