import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import type { Pool } from 'pg';
import { setBudgetCap } from './budget.js';
import {
  FLEET_APP_NAME,
  FLEET_APP_VERSION,
  FLEET_QUEUE,
  FLEET_WORKFLOW,
  fleetTunables,
  GATE_TOPIC,
  FLEET_SCHEMA as S,
} from './settings.js';
import { ensureDbosSchema, ensureSchema, openPool, readRun } from './store.js';
import { listWorkers, type WorkerRow } from './workers.js';

/**
 * What any machine does against the fleet's database without being a worker: submit a run,
 * answer a gate, read the fleet's state, check the set-up. DBOS's client is loaded only here.
 */

export const FLEET_ENGINES = ['ticks', 'single', 'cycle'] as const;

export interface SubmitRequest {
  readonly db: string;
  readonly repo: string;
  readonly cwd: string;
  readonly prdFile: string | null;
  readonly issue: number | null;
  readonly engine: string | null;
  readonly parallel: number | null;
  readonly yes: boolean;
  readonly runId?: string;
}

export type FleetResult<T> = { ok: true; value: T } | { ok: false; detail: string; fix: string };

async function withClient<T>(
  db: string,
  body: (client: import('@dbos-inc/dbos-sdk').DBOSClient) => Promise<T>,
) {
  const { DBOSClient } = await import('@dbos-inc/dbos-sdk');
  const client = await DBOSClient.create({ systemDatabaseUrl: db, applicationName: FLEET_APP_NAME });
  try {
    return await body(client);
  } finally {
    await client.destroy();
  }
}

async function withPool<T>(db: string, body: (pool: Pool) => Promise<T>): Promise<T> {
  const pool = await openPool(db);
  try {
    return await body(pool);
  } finally {
    await pool.end();
  }
}

export async function submitFleetRun(request: SubmitRequest): Promise<FleetResult<{ runId: string }>> {
  // Flags the local workflow cannot honour yet are refused, never ignored.
  if (request.issue !== null)
    return fail(
      '--issue is not supported by the workflow yet (ralphy start reads PRD.md)',
      'Write the issue as a PRD file and pass --prd FILE.',
    );
  if (request.parallel !== null && request.parallel !== 1)
    return fail(
      `--parallel ${request.parallel}: the workflow implements one task at a time`,
      'Leave --parallel out (or 1); submit several runs to work in parallel.',
    );
  if (request.engine !== null && !(FLEET_ENGINES as readonly string[]).includes(request.engine))
    return fail(`--engine ${request.engine} is not an engine`, `Use one of ${FLEET_ENGINES.join(', ')}.`);
  const repo = repoLocation(request.repo, request.cwd);
  let prd: string | null = null;
  if (request.prdFile !== null) {
    const path = resolve(request.cwd, request.prdFile);
    prd = await readFile(path, 'utf8').catch(() => null);
    if (prd === null)
      return fail(`cannot read the PRD file ${path}`, 'Pass an existing file: --prd ./PRD.md.');
  }
  const runId =
    request.runId ??
    `run-${new Date()
      .toISOString()
      .replace(/[-:.TZ]/g, '')
      .slice(0, 14)}-${Math.random().toString(36).slice(2, 8)}`;
  return connected(request.db, async () => {
    await withPool(request.db, async (pool) => {
      await ensureSchema(pool);
      await pool.query(
        `INSERT INTO ${S}.runs (run_id, repo, prd, engine, auto_approve) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (run_id) DO NOTHING`,
        [runId, repo, prd, request.engine, request.yes],
      );
    });
    // A submit before any worker ever started creates DBOS's tables itself.
    await withPool(request.db, (pool) => ensureDbosSchema(pool, request.db));
    await withClient(request.db, (client) =>
      client.enqueue(
        {
          queueName: FLEET_QUEUE,
          workflowName: FLEET_WORKFLOW,
          workflowID: runId,
          appVersion: FLEET_APP_VERSION,
          // One writer per repository (the queue's partitions run one at a time).
          queuePartitionKey: repo,
        },
        runId,
        request.yes,
      ),
    );
    return { runId };
  });
}

/** A URL stays as given; a local path becomes absolute (workers clone it). */
function repoLocation(repo: string, cwd: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(repo) || /^[^/]+@[^:]+:/.test(repo)) return repo;
  const path = isAbsolute(repo) ? repo : resolve(cwd, repo);
  return existsSync(path) ? path : repo;
}

export interface ApproveRequest {
  readonly db: string;
  readonly runId: string;
  readonly decision: 'approve' | 'reject';
  readonly reason: string | null;
  readonly by: string;
}

export async function approveFleetRun(request: ApproveRequest): Promise<FleetResult<{ gate: string }>> {
  return connected(request.db, async () => {
    const row = await withPool(request.db, async (pool) => {
      await ensureSchema(pool);
      return readRun(pool, request.runId);
    });
    if (!row) return fail(`no fleet run ${request.runId}`, 'relais fleet status lists the runs.');
    if (!row.waiting_gate)
      return fail(
        `run ${request.runId} waits at no gate (it is ${row.status}, ${row.state})`,
        'Answer when relais fleet status shows it waiting.',
      );
    const gate = row.waiting_gate;
    await withClient(request.db, (client) =>
      client.send(
        request.runId,
        { gate, decision: request.decision, reason: request.reason, by: request.by },
        GATE_TOPIC,
        // The same answer sent twice is one message.
        `${request.runId}:${gate}:${String(row.updated_at)}`,
      ),
    );
    return { gate };
  });
}

export interface FleetStatus {
  readonly runs: Array<{
    run_id: string;
    repo: string;
    state: string;
    status: string;
    waiting_gate: string | null;
    pr_url: string | null;
    spent_usd: number;
    detail: string | null;
  }>;
  readonly byStatus: Record<string, number>;
  readonly waitingGates: Array<{ run_id: string; gate: string }>;
  readonly budget: { cap_usd: number | null; spent_usd: number; reserved_usd: number };
  readonly workers: Array<WorkerRow & { alive: boolean }>;
}

export async function fleetStatus(db: string, env: NodeJS.ProcessEnv): Promise<FleetResult<FleetStatus>> {
  const { deadAfterMs } = fleetTunables(env);
  return connected(db, () =>
    withPool(db, async (pool) => {
      await ensureSchema(pool);
      const runs = await pool.query(
        `SELECT r.run_id, r.repo, r.state, r.status, r.waiting_gate, r.pr_url, r.detail,
           COALESCE((SELECT SUM(COALESCE(l.spent_usd, l.reserved_usd)) FROM ${S}.ledger l WHERE l.run_id = r.run_id), 0)::float8 AS spent_usd
         FROM ${S}.runs r ORDER BY r.submitted_at`,
      );
      const budget = await pool.query(
        `SELECT cap_usd::float8 AS cap_usd, spent_usd::float8 AS spent_usd, reserved_usd::float8 AS reserved_usd FROM ${S}.budget WHERE id = 1`,
      );
      const workers = (await listWorkers(pool)).map((w) => ({
        ...w,
        alive: !w.stopped && w.taken_over_by === null && w.age_ms < deadAfterMs,
      }));
      const byStatus: Record<string, number> = {};
      for (const run of runs.rows) byStatus[run.status] = (byStatus[run.status] ?? 0) + 1;
      return {
        runs: runs.rows,
        byStatus,
        waitingGates: runs.rows
          .filter((r) => r.waiting_gate)
          .map((r) => ({ run_id: r.run_id, gate: r.waiting_gate })),
        budget: budget.rows[0] ?? { cap_usd: null, spent_usd: 0, reserved_usd: 0 },
        workers,
      };
    }),
  );
}

export async function setFleetBudget(db: string, capUsd: number | null): Promise<FleetResult<null>> {
  return connected(db, () =>
    withPool(db, async (pool) => {
      await ensureSchema(pool);
      await setBudgetCap(pool, capUsd);
      return null;
    }),
  );
}

export interface FleetCheck {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
  readonly fix: string | null;
}

/** `relais fleet doctor`: the connection, DBOS's schema and ours, workers alive. */
export async function fleetDoctor(db: string, env: NodeJS.ProcessEnv): Promise<FleetCheck[]> {
  const checks: FleetCheck[] = [];
  let pool: Pool | null = null;
  try {
    pool = await openPool(db);
    const version = await pool.query<{ server_version: string }>('SHOW server_version');
    checks.push({
      name: 'connection',
      ok: true,
      detail: `PostgreSQL ${version.rows[0]?.server_version}`,
      fix: null,
    });
  } catch (error) {
    checks.push({
      name: 'connection',
      ok: false,
      detail: `cannot connect: ${(error as Error).message}`,
      fix: 'Start Postgres (docker compose up -d) and pass --db postgresql://user@host:port/db.',
    });
    await pool?.end().catch(() => undefined);
    return checks;
  }
  try {
    const dbos = await pool.query(`SELECT to_regclass('dbos.workflow_status') IS NOT NULL AS present`);
    checks.push(
      dbos.rows[0]?.present
        ? { name: 'DBOS schema', ok: true, detail: 'dbos.workflow_status is there', fix: null }
        : {
            name: 'DBOS schema',
            ok: false,
            detail: 'no DBOS system tables: no worker has started on this database',
            fix: 'Start one: relais worker --db <url> (it creates them).',
          },
    );
    const ours = await pool.query(`SELECT to_regclass('${S}.runs') IS NOT NULL AS present`);
    checks.push(
      ours.rows[0]?.present
        ? { name: 'fleet schema', ok: true, detail: `${S} tables are there`, fix: null }
        : {
            name: 'fleet schema',
            ok: false,
            detail: `no ${S} tables yet`,
            fix: 'Start a worker or submit a run: either creates them.',
          },
    );
    if (ours.rows[0]?.present) {
      const { deadAfterMs } = fleetTunables(env);
      const workers = await listWorkers(pool);
      const alive = workers.filter((w) => !w.stopped && w.taken_over_by === null && w.age_ms < deadAfterMs);
      checks.push(
        alive.length > 0
          ? {
              name: 'workers',
              ok: true,
              detail: `${alive.length} alive: ${alive.map((w) => `${w.executor_id} (${Math.round(w.age_ms)} ms ago)`).join(', ')}`,
              fix: null,
            }
          : {
              name: 'workers',
              ok: false,
              detail: `no worker alive (${workers.length} known)`,
              fix: 'Start one on any machine: relais worker --db <url>.',
            },
      );
    }
  } finally {
    await pool.end().catch(() => undefined);
  }
  return checks;
}

async function connected<T>(db: string, body: () => Promise<T | FleetResult<T>>): Promise<FleetResult<T>> {
  try {
    const value = await body();
    if (
      value &&
      typeof value === 'object' &&
      'ok' in value &&
      typeof (value as { ok: unknown }).ok === 'boolean'
    )
      return value as FleetResult<T>;
    return { ok: true, value: value as T };
  } catch (error) {
    return fail(
      `the fleet database (${redact(db)}) answered: ${(error as Error).message}`,
      'relais fleet doctor --db <url> checks the connection and the schema.',
    );
  }
}

/** A database URL without its password, for messages. */
export function redact(db: string): string {
  return db.replace(/(\/\/[^:/@]+):[^@]*@/, '$1:***@');
}

function fail<T>(detail: string, fix: string): FleetResult<T> {
  return { ok: false, detail, fix };
}
