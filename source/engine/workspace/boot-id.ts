export { processStartTicks } from '../supervise/process-tree.js';

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

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
