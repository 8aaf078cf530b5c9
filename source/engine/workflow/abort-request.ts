import { rm } from 'node:fs/promises';
import { z } from 'zod';
import { lockFileSchema } from '../protocol/lock.js';
import { readJsonValidated, writeJsonAtomic } from '../workspace/atomic-write.js';
import { isProcessAlive, processStartTicks } from '../workspace/boot-id.js';
import type { WorkspacePaths } from '../workspace/paths.js';
import type { Clock } from './clock.js';

/**
 * `ralphy abort` from a second process (seed 002 §9): it writes relais/ABORT.json and wakes the
 * running instance with SIGUSR1; the instance also looks for the file every second, so an abort is
 * never lost when the signal cannot be delivered. The running instance stops its agent, records
 * FAILED with reason `aborted` and exits cleanly. The pid comes from the workspace lock and must
 * still be the same process (its start time matches), so a reused pid is never signalled.
 */

const abortFileSchema = z.strictObject({
  requested_at: z.iso.datetime(),
  by_pid: z.int(),
});

export const ABORT_SIGNAL: NodeJS.Signals = 'SIGUSR1';

export type AbortDelivery =
  | { kind: 'signalled'; pid: number }
  | { kind: 'requested'; pid: number; detail: string }
  | { kind: 'not_running' };

export async function requestAbort(paths: WorkspacePaths, now: Date): Promise<AbortDelivery> {
  const lock = await readJsonValidated(paths.lock, lockFileSchema);
  if (lock.kind !== 'ok' || !isProcessAlive(lock.value.pid)) return { kind: 'not_running' };
  const holder = lock.value;
  if (holder.pid_start_ticks !== null && processStartTicks(holder.pid) !== holder.pid_start_ticks)
    return { kind: 'not_running' };
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

/**
 * In the running instance: calls `onAbort` once, when an abort request arrives (signal or file).
 * A request file left from before this run started is removed first, so it never aborts a new run.
 */
export async function watchAbortRequests(
  paths: WorkspacePaths,
  clock: Clock,
  onAbort: () => void,
): Promise<{ dispose(): Promise<void> }> {
  await rm(paths.abortRequest, { force: true });
  let fired = false;
  const check = async () => {
    if (fired) return;
    const read = await readJsonValidated(paths.abortRequest, abortFileSchema);
    if (read.kind === 'missing' || fired) return;
    fired = true;
    onAbort();
  };
  const onSignal = () => void check();
  process.on(ABORT_SIGNAL, onSignal);
  const stop = clock.every(1000, () => void check());
  return {
    async dispose() {
      stop();
      process.off(ABORT_SIGNAL, onSignal);
      await rm(paths.abortRequest, { force: true });
    },
  };
}
