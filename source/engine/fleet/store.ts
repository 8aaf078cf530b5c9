import type { Pool, PoolClient } from 'pg';
import { assertOwner, inTransaction, type Owner } from './fence.js';
import { FLEET_SCHEMA as S } from './settings.js';

export { inTransaction };

/**
 * The fleet's own tables, beside DBOS's system tables in the same database: workers and their
 * heartbeats, one row per submitted run (what `fleet status` shows and what a resumed step
 * restores the repository from), the fleet-wide budget and its per-call ledger. `pg` is imported
 * only when a fleet command runs (local runs never load it).
 */

/**
 * `statementMs`: no statement may run (or wait for a lock) longer than this, on the server; and
 * the client gives up on a connection that does not answer, or a free connection that does not
 * come, after twice that (the pool then drops that connection). Without it, one query that never
 * returns would hold its caller forever: for the heartbeat, every later heartbeat too.
 */
export interface PoolBounds {
  readonly statementMs: number;
}

export async function openPool(url: string, max = 4, bounds: PoolBounds | null = null): Promise<Pool> {
  const pg = await import('pg');
  const pool = new pg.default.Pool({
    connectionString: url,
    max,
    ...(bounds
      ? {
          statement_timeout: bounds.statementMs,
          query_timeout: bounds.statementMs * 2,
          connectionTimeoutMillis: bounds.statementMs * 2,
        }
      : {}),
  });
  // An idle client that loses the server must not crash the worker: the next query reports it.
  pool.on('error', () => undefined);
  return pool;
}

const DDL = [
  `CREATE SCHEMA IF NOT EXISTS ${S}`,
  `CREATE TABLE IF NOT EXISTS ${S}.workers (
     executor_id text PRIMARY KEY, host text NOT NULL, pid integer NOT NULL,
     started_at timestamptz NOT NULL DEFAULT now(), heartbeat_at timestamptz NOT NULL DEFAULT now(),
     stopped_at timestamptz, taken_over_by text, takeover_done boolean NOT NULL DEFAULT false)`,
  `CREATE TABLE IF NOT EXISTS ${S}.runs (
     run_id text PRIMARY KEY, repo text NOT NULL, prd text, engine text, auto_approve boolean NOT NULL,
     submitted_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now(),
     state text NOT NULL DEFAULT 'QUEUED', status text NOT NULL DEFAULT 'queued', detail text,
     waiting_gate text, feature_branch text, head text, workflow_json text, pr_url text,
     executor_id text, prepared boolean NOT NULL DEFAULT false)`,
  `CREATE TABLE IF NOT EXISTS ${S}.budget (
     id integer PRIMARY KEY CHECK (id = 1), cap_usd numeric, spent_usd numeric NOT NULL DEFAULT 0,
     reserved_usd numeric NOT NULL DEFAULT 0)`,
  `INSERT INTO ${S}.budget (id) VALUES (1) ON CONFLICT DO NOTHING`,
  `CREATE TABLE IF NOT EXISTS ${S}.ledger (
     run_id text NOT NULL, call_key text NOT NULL, reserved_usd numeric NOT NULL,
     spent_usd numeric, settled boolean NOT NULL DEFAULT false, at timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (run_id, call_key))`,
  // Added after the first release: a database made by it gains them here (idempotent).
  `ALTER TABLE ${S}.workers ADD COLUMN IF NOT EXISTS generation bigint NOT NULL DEFAULT 0`,
  `ALTER TABLE ${S}.runs ADD COLUMN IF NOT EXISTS issue integer`,
  `ALTER TABLE ${S}.runs ADD COLUMN IF NOT EXISTS parallel integer`,
  `ALTER TABLE ${S}.runs ADD COLUMN IF NOT EXISTS pushed text[] NOT NULL DEFAULT '{}'`,
  `ALTER TABLE ${S}.runs ADD COLUMN IF NOT EXISTS planner_json text`,
  `ALTER TABLE ${S}.runs ADD COLUMN IF NOT EXISTS gate_wait text`,
  `ALTER TABLE ${S}.runs ADD COLUMN IF NOT EXISTS gate_json text`,
  `ALTER TABLE ${S}.ledger ADD COLUMN IF NOT EXISTS attempt text`,
  `ALTER TABLE ${S}.ledger ADD COLUMN IF NOT EXISTS abandoned boolean NOT NULL DEFAULT false`,
  `ALTER TABLE ${S}.ledger ADD COLUMN IF NOT EXISTS account text`,
  `ALTER TABLE ${S}.ledger ADD COLUMN IF NOT EXISTS role text`,
  `CREATE TABLE IF NOT EXISTS ${S}.events (
     run_id text NOT NULL, seq bigserial, at timestamptz NOT NULL DEFAULT now(), event jsonb NOT NULL,
     PRIMARY KEY (run_id, seq))`,
  `CREATE TABLE IF NOT EXISTS ${S}.accounts (
     name text PRIMARY KEY, calls_per_minute integer CHECK (calls_per_minute > 0))`,
  `CREATE TABLE IF NOT EXISTS ${S}.account_calls (
     account text NOT NULL, at timestamptz NOT NULL DEFAULT now())`,
  `CREATE INDEX IF NOT EXISTS account_calls_by_time ON ${S}.account_calls (account, at)`,
  // Each finished agent call: what a phase run again after a kill replays (agent-memo.ts).
  `CREATE TABLE IF NOT EXISTS ${S}.agent_calls (
     run_id text NOT NULL, step_key text NOT NULL, call_key text NOT NULL, ledger_key text NOT NULL,
     role text NOT NULL, tree_before text NOT NULL, tree_after text NOT NULL, change bytea NOT NULL,
     outcome jsonb NOT NULL, lines jsonb NOT NULL, at timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (run_id, step_key, call_key))`,
];

/** Idempotent: every worker and client runs it; a lock keeps two first starts from racing. */
export async function ensureSchema(pool: Pool): Promise<void> {
  await inTransaction(pool, async (c) => {
    await c.query('SELECT pg_advisory_xact_lock(204820)');
    for (const statement of DDL) await c.query(statement);
  });
}

/**
 * DBOS's own tables, created once under a lock: two workers launching at the same moment both
 * migrate, and Postgres refuses one ("tuple concurrently updated"), which would kill that worker.
 * DBOS.migrate logs to stdout (a command's JSON answer): those lines go to stderr instead.
 */
export async function ensureDbosSchema(pool: Pool, db: string): Promise<void> {
  const client = await pool.connect();
  try {
    // Never block inside a statement: DBOS's CREATE INDEX CONCURRENTLY waits for every open
    // transaction, so a session blocked on the lock would deadlock the migration holding it.
    // Done means every migration this SDK knows is recorded, not that the first table exists: a
    // client that saw workflow_status mid-migration queried a column (creator_xid) added later.
    const wanted = await dbosMigrationCount();
    for (;;) {
      if ((await dbosMigrationVersion(client)) >= wanted) return;
      const took = await client.query('SELECT pg_try_advisory_lock(204821) AS ok');
      if (took.rows[0]?.ok === true) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const { DBOS } = await import('@dbos-inc/dbos-sdk');
    const write = process.stdout.write;
    process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
    try {
      await DBOS.migrate(db);
    } finally {
      process.stdout.write = write;
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock(204821)').catch(() => undefined);
    client.release();
  }
}

/** DBOS's schema as `relais fleet doctor` reports it: how many of its migrations are recorded. */
export async function dbosSchemaProgress(pool: Pool): Promise<{ applied: number; wanted: number }> {
  const client = await pool.connect();
  try {
    return { applied: await dbosMigrationVersion(client), wanted: await dbosMigrationCount() };
  } finally {
    client.release();
  }
}

/** The version DBOS recorded (0 before its table exists; the name is resolved before any CASE). */
async function dbosMigrationVersion(client: PoolClient): Promise<number> {
  const table = await client.query(`SELECT to_regclass('dbos.dbos_migrations') IS NOT NULL AS present`);
  if (table.rows[0]?.present !== true) return 0;
  const { rows } = await client.query(
    'SELECT coalesce(max(version), 0) AS version FROM dbos.dbos_migrations',
  );
  return Number(rows[0]?.version ?? 0);
}

/** How many system-database migrations the installed DBOS SDK applies (its own list). */
async function dbosMigrationCount(): Promise<number> {
  const { allMigrations } = await import('@dbos-inc/dbos-sdk/internal/sysdb_migrations/internal/migrations');
  return allMigrations('dbos').length;
}

export interface RunRow {
  readonly run_id: string;
  readonly repo: string;
  readonly prd: string | null;
  readonly engine: string | null;
  readonly auto_approve: boolean;
  readonly state: string;
  readonly status: string;
  readonly detail: string | null;
  readonly waiting_gate: string | null;
  readonly feature_branch: string | null;
  readonly head: string | null;
  readonly workflow_json: string | null;
  readonly pr_url: string | null;
  readonly executor_id: string | null;
  readonly prepared: boolean;
  readonly updated_at: Date;
  readonly issue: number | null;
  readonly parallel: number | null;
  /** Every commit this run ever meant to push (written before the push): the remote may hold one. */
  readonly pushed: string[];
  /** The planner's session files (relais/planner/), as a JSON map of path to text. */
  readonly planner_json: string | null;
  /** The id of the gate the run waits at (a new one per wait: an answer names it). */
  readonly gate_wait: string | null;
  /** That gate's request (title, lines, answer kind), for approve, attach and GitHub. */
  readonly gate_json: string | null;
}

export async function readRun(pool: Pool, runId: string): Promise<RunRow | null> {
  const { rows } = await pool.query<RunRow>(`SELECT * FROM ${S}.runs WHERE run_id = $1`, [runId]);
  return rows[0] ?? null;
}

/** Writes the run's row; with an owner, only while that execution still owns the run (fence.ts). */
export async function updateRun(
  pool: Pool,
  runId: string,
  patch: Partial<RunRow>,
  owner: Owner = null,
): Promise<void> {
  const keys = Object.keys(patch) as (keyof RunRow)[];
  if (keys.length === 0) return;
  const sets = keys.map((k, i) => `${k} = $${i + 2}`).join(', ');
  await inTransaction(pool, async (client) => {
    await assertOwner(client, runId, owner);
    await client.query(`UPDATE ${S}.runs SET ${sets}, updated_at = now() WHERE run_id = $1`, [
      runId,
      ...keys.map((k) => patch[k]),
    ]);
  });
}
