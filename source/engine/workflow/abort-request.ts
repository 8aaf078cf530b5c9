import { rm } from 'node:fs/promises';
import * as z from 'zod';
import { lockFileSchema } from '../protocol/lock.js';
import type { Clock } from '../supervise/clock.js';
import { readJsonValidated, writeJsonAtomic } from '../workspace/atomic-write.js';
import { isProcessAlive, processStartTicks } from '../workspace/boot-id.js';
import type { WorkspacePaths } from '../workspace/paths.js';

/**
 * `ralphy abort` from a second process (seed 002 §9): it writes relais/ABORT.json and wakes the
 * running instance with SIGUSR2; the instance also looks for the file every second, so an abort
 * is never lost when the signal cannot be delivered. The running instance stops its agent, records
 * FAILED with reason `aborted` and exits cleanly. The pid comes from the workspace lock, must hold
 * it for `ralphy start`, and must still be the same process (its start time matches), so a reused
 * pid is never signalled. (SIGUSR1 is not used: Node.js opens its debugger on it.)
 */

const abortFileSchema = z.strictObject({
  requested_at: z.iso.datetime(),
  by_pid: z.int(),
});

export const ABORT_SIGNAL: NodeJS.Signals = 'SIGUSR2';
const WORKFLOW_COMMAND = 'ralphy start';

export type AbortDelivery =
  | { kind: 'signalled'; pid: number }
  | { kind: 'requested'; pid: number; detail: string }
  | { kind: 'other_command'; pid: number; command: string }
  | { kind: 'not_running' };

export async function requestAbort(paths: WorkspacePaths, now: Date): Promise<AbortDelivery> {
  const lock = await readJsonValidated(paths.lock, lockFileSchema);
  if (lock.kind !== 'ok' || !isProcessAlive(lock.value.pid)) return { kind: 'not_running' };
  const holder = lock.value;
  if (holder.pid_start_ticks !== null && processStartTicks(holder.pid) !== holder.pid_start_ticks)
    return { kind: 'not_running' };
  if (holder.command !== WORKFLOW_COMMAND)
    return { kind: 'other_command', pid: holder.pid, command: holder.command };
  await writeJsonAtomic(paths.abortRequest, abortFileSchema, {
    requested_at: now.toISOString(),
    by_pid: process.pid,
  });
  try {
    process.kill(holder.pid, ABORT_SIGNAL);
    return { kind: 'signalled', pid: holder.pid };
  } catch (error) {
    return { kind: 'requested', pid: holder.pid, detail: (error as Error).message };
  }
}

/** A request left by an earlier run; removed as soon as a new run holds the lock. */
export async function clearAbortRequest(paths: WorkspacePaths): Promise<void> {
  await rm(paths.abortRequest, { force: true });
}

export interface AbortWatch {
  /** Starts reading the request file of this workspace (once the run holds its lock). */
  attach(paths: WorkspacePaths): Promise<void>;
  dispose(): Promise<void>;
}

/**
 * In the running instance: the signal handler is installed before the run takes the lock (so the
 * signal never falls on Node's default, which ends the process), and `onAbort` is called once,
 * when a request file is there.
 */
export function watchAbortRequests(clock: Clock, onAbort: () => void): AbortWatch {
  let paths: WorkspacePaths | null = null;
  let fired = false;
  let stopTimer: (() => void) | null = null;
  const check = async () => {
    if (fired || paths === null) return;
    const read = await readJsonValidated(paths.abortRequest, abortFileSchema);
    if (read.kind === 'missing' || fired) return;
    fired = true;
    onAbort();
  };
  const onSignal = () => void check();
  process.on(ABORT_SIGNAL, onSignal);
  return {
    async attach(workspace) {
      paths = workspace;
      stopTimer = clock.every(1000, () => void check());
      await check();
    },
    async dispose() {
      stopTimer?.();
      process.off(ABORT_SIGNAL, onSignal);
      if (paths) await rm(paths.abortRequest, { force: true });
    },
  };
}
