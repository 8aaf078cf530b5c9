import type { Pool } from 'pg';
import { FLEET_SCHEMA as S } from './settings.js';

/**
 * Heartbeats and takeover (issue 20). DBOS recovers a workflow only on a worker with its executor
 * id, so without DBOS's hosted coordinator a dead worker's workflows wait for it. Two ways out:
 * the worker restarts under the same id (a supervisor), or a survivor resumes them once the dead
 * one is surely dead: its heartbeat is older than deadAfter, judged by the database's clock so
 * machines' clocks do not matter, and a live worker that cannot write its heartbeat for half of
 * that stops itself (a lease): by the time a survivor acts, the old one has fenced itself off.
 */

/**
 * Registers (or re-registers) a worker; the generation it returns is this process's: a restart
 * under the same id gets a new one, so an old process of that id, if any still runs, finds its
 * heartbeat refused and stops.
 */
export async function registerWorker(
  pool: Pool,
  executorId: string,
  host: string,
  pid: number,
): Promise<number> {
  // A restart under the same id waits while a survivor is still resuming its workflows.
  for (;;) {
    const { rows } = await pool.query<{ generation: string }>(
      `INSERT INTO ${S}.workers (executor_id, host, pid) VALUES ($1, $2, $3)
       ON CONFLICT (executor_id) DO UPDATE SET host = $2, pid = $3, started_at = now(), heartbeat_at = now(),
         stopped_at = NULL, taken_over_by = NULL, takeover_done = false,
         generation = ${S}.workers.generation + 1
       WHERE ${S}.workers.taken_over_by IS NULL OR ${S}.workers.takeover_done
       RETURNING generation`,
      [executorId, host, pid],
    );
    if (rows[0]) return Number(rows[0].generation);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * False when this process no longer holds the worker's lease: a survivor took its workflows over,
 * or a newer process registered under the same id. It must stop at once.
 */
export async function beat(pool: Pool, executorId: string, generation: number): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE ${S}.workers SET heartbeat_at = now()
     WHERE executor_id = $1 AND generation = $2 AND taken_over_by IS NULL`,
    [executorId, generation],
  );
  return rowCount === 1;
}

/** This process stops (Ctrl-C, SIGTERM): survivors take its runs at once. Never a newer process's row. */
export async function markStopped(pool: Pool, executorId: string, generation: number): Promise<void> {
  await pool.query(
    `UPDATE ${S}.workers SET stopped_at = now()
     WHERE executor_id = $1 AND generation = $2 AND taken_over_by IS NULL`,
    [executorId, generation],
  );
}

/**
 * Claims one dead (or stopped) worker for takeover; only one survivor wins each. A takeover that
 * was claimed but not finished (its resume failed, or its claimer died too) is claimed again, by
 * its claimer or by anyone once that claimer is itself dead: a claim is never lost.
 */
export async function claimDeadWorker(pool: Pool, me: string, deadAfterMs: number): Promise<string | null> {
  const { rows } = await pool.query<{ executor_id: string }>(
    `WITH dead AS (
       SELECT executor_id FROM ${S}.workers
       WHERE stopped_at IS NOT NULL OR taken_over_by IS NOT NULL
         OR heartbeat_at < now() - make_interval(secs => $2::double precision / 1000))
     UPDATE ${S}.workers SET taken_over_by = $1
     WHERE executor_id = (
       SELECT executor_id FROM ${S}.workers
       WHERE executor_id <> $1 AND NOT takeover_done AND executor_id IN (SELECT executor_id FROM dead)
         AND (taken_over_by IS NULL OR taken_over_by = $1 OR taken_over_by IN (SELECT executor_id FROM dead))
       ORDER BY heartbeat_at LIMIT 1 FOR UPDATE SKIP LOCKED)
     RETURNING executor_id`,
    [me, deadAfterMs],
  );
  return rows[0]?.executor_id ?? null;
}

export async function finishTakeover(pool: Pool, dead: string): Promise<void> {
  await pool.query(`UPDATE ${S}.workers SET takeover_done = true WHERE executor_id = $1`, [dead]);
}

export interface WorkerRow {
  readonly executor_id: string;
  readonly host: string;
  readonly pid: number;
  readonly age_ms: number;
  readonly stopped: boolean;
  readonly taken_over_by: string | null;
}

export async function listWorkers(pool: Pool): Promise<WorkerRow[]> {
  const { rows } = await pool.query<WorkerRow>(
    `SELECT executor_id, host, pid, (EXTRACT(EPOCH FROM now() - heartbeat_at) * 1000)::float8 AS age_ms,
       stopped_at IS NOT NULL AS stopped, taken_over_by
     FROM ${S}.workers ORDER BY executor_id`,
  );
  return rows;
}
