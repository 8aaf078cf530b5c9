import type { Pool } from 'pg';
import { beat } from './workers.js';

/**
 * A worker's lease (issue 20: a dead worker's runs are resumed "only once it is surely dead").
 * The heartbeat renews it; a survivor may claim the worker once its heartbeat is `deadAfterMs`
 * old by the database's clock. What a live but slow worker does meanwhile:
 *
 * - Writes to the database never need the lease: each is fenced by the run's DBOS owner token
 *   (fence.ts), so none lands once the run was resumed elsewhere.
 * - A side effect outside the database (a push, a pull request, a comment) first waits for
 *   `ready()`: the lease must have been renewed less than deadAfter/2 ago, counted from when the
 *   renewing heartbeat was SENT (the database stamped it no earlier), so a survivor can claim the
 *   worker no sooner than deadAfter/2 after the last such side effect started.
 * - A late heartbeat alone never stops the worker (it used to, and a loaded machine then lost a
 *   live worker that nobody restarted). The worker stops only when the database says it lost the
 *   lease: taken over, or a newer process registered under its id.
 *
 * The heartbeat has a connection of its own, so it never queues behind the runs' queries.
 */

export interface Lease {
  /** True once the lease is known lost: the worker must stop at once. */
  readonly fenced: boolean;
  /** Resolves when the lease is lost. */
  readonly lost: Promise<void>;
  /** Resolves while the lease is surely held; waits for a heartbeat when it may not be; rejects once lost. */
  ready(): Promise<void>;
  dispose(): void;
}

export interface LeaseTiming {
  readonly heartbeatMs: number;
  readonly deadAfterMs: number;
}

export class LeaseLostError extends Error {
  constructor(executorId: string) {
    super(`worker ${executorId} lost its lease (another worker took its runs over)`);
  }
}

export function holdLease(
  pool: Pool,
  executorId: string,
  generation: number,
  timing: LeaseTiming,
  log: (message: string, level?: 'info' | 'warn' | 'error') => void,
  now: () => number = Date.now,
): Lease {
  let fenced = false;
  // Registration wrote the first heartbeat just before this.
  let heldUntil = now() + timing.deadAfterMs / 2;
  let markLost: () => void = () => undefined;
  const lost = new Promise<void>((resolve) => {
    markLost = resolve;
  });
  const waiters = new Set<{ resolve: () => void; reject: (error: Error) => void }>();
  const fence = () => {
    fenced = true;
    clearInterval(timer);
    markLost();
    for (const w of waiters) w.reject(new LeaseLostError(executorId));
    waiters.clear();
  };
  let beating = false;
  let lateSince: number | null = null;
  let lastTick = now();
  const renew = async () => {
    const tick = now();
    // A timer that fires this late means the process was busy or starved: said, so a worker
    // claimed while alive can be explained from its own log.
    if (tick - lastTick > timing.heartbeatMs + timing.deadAfterMs / 4)
      log(
        `heartbeat timer ran ${Math.round((tick - lastTick - timing.heartbeatMs) / 1000)} s late (this process was busy or starved of CPU)`,
        'warn',
      );
    lastTick = tick;
    if (beating || fenced) return;
    beating = true;
    const sent = now();
    try {
      if (!(await beat(pool, executorId, generation))) return fence();
      heldUntil = sent + timing.deadAfterMs / 2;
      if (lateSince !== null)
        log(`heartbeat written again after ${Math.round((now() - lateSince) / 1000)} s without one`, 'warn');
      lateSince = null;
      for (const w of waiters) w.resolve();
      waiters.clear();
    } catch (error) {
      if (lateSince === null) {
        lateSince = sent;
        log(`heartbeat failed: ${(error as Error).message}`, 'warn');
      }
    } finally {
      beating = false;
    }
  };
  const timer = setInterval(renew, timing.heartbeatMs);
  return {
    get fenced() {
      return fenced;
    },
    lost,
    ready() {
      if (fenced) return Promise.reject(new LeaseLostError(executorId));
      if (now() < heldUntil) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        // A side effect held back this long is said in the worker's log, with why.
        const slow = setTimeout(
          () =>
            log(
              `a push, pull request or comment has waited ${Math.round(timing.deadAfterMs / 100) / 10} s for the lease: no heartbeat was written meanwhile`,
              'warn',
            ),
          timing.deadAfterMs,
        );
        const settled =
          <T>(done: (value: T) => void) =>
          (value: T) => {
            clearTimeout(slow);
            done(value);
          };
        waiters.add({ resolve: settled(resolve), reject: settled(reject) });
      });
    },
    dispose: () => clearInterval(timer),
  };
}
