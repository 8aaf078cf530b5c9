import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import type { Pool } from 'pg';
import type { FleetRunSummary, FleetSnapshot } from '../protocol/fleet.js';
import { listAccounts, rateWindowSeconds, setAccountRate } from './accounts.js';
import { setBudgetCap } from './budget.js';
import { snapshotPlanner } from './checkout.js';
import type { GateReply, GateWait } from './gate-wait.js';
import {
  FLEET_APP_NAME,
  FLEET_APP_VERSION,
  FLEET_QUEUE,
  FLEET_WORKFLOW,
  fleetTunables,
  GATE_TOPIC,
  FLEET_SCHEMA as S,
} from './settings.js';
import { dbosSchemaProgress, ensureDbosSchema, ensureSchema, openPool, readRun } from './store.js';
import { listWorkers } from './workers.js';

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
  const refused = refusedFlags(request);
  if (refused) return refused;
  const repo = repoLocation(request.repo, request.cwd);
  let prd: string | null = null;
  if (request.prdFile !== null) {
    const path = resolve(request.cwd, request.prdFile);
    prd = await readFile(path, 'utf8').catch(() => null);
    if (prd === null)
      return fail(`cannot read the PRD file ${path}`, 'Pass an existing file: --prd ./PRD.md.');
  }
  let planner: string | null = null;
  if (request.issue !== null) {
    const planned = await plannedIssue(request, repo);
    if (!planned.ok) return planned;
    planner = planned.value;
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
        `INSERT INTO ${S}.runs (run_id, repo, prd, engine, auto_approve, issue, parallel, planner_json)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (run_id) DO NOTHING`,
        [runId, repo, prd, request.engine, request.yes, request.issue, request.parallel, planner],
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

/** Flags the fleet cannot honour are refused with the reason, never ignored. */
function refusedFlags(request: SubmitRequest): FleetResult<never> | null {
  if (request.prdFile !== null && request.issue !== null)
    return fail('--prd and --issue both say what to build', 'Pass one of them.');
  if (request.issue !== null && (!Number.isInteger(request.issue) || request.issue < 1))
    return fail(`--issue ${request.issue} is not an issue number`, 'Pass a whole number of at least 1.');
  if (
    request.parallel !== null &&
    (!Number.isInteger(request.parallel) || request.parallel < 1 || request.parallel > 16)
  )
    return fail(
      `--parallel ${request.parallel}: lanes are a whole number from 1 to 16`,
      'Pass --parallel 1 to 16, as ralphy start takes it.',
    );
  if (request.engine !== null && !(FLEET_ENGINES as readonly string[]).includes(request.engine))
    return fail(`--engine ${request.engine} is not an engine`, `Use one of ${FLEET_ENGINES.join(', ')}.`);
  if (
    request.parallel !== null &&
    request.parallel > 1 &&
    request.engine !== null &&
    request.engine !== 'ticks'
  )
    return fail(
      `--parallel ${request.parallel} runs tasks in lanes of the ticks engine, not the ${request.engine} engine`,
      'Leave --engine out (or --engine ticks), or leave --parallel out.',
    );
  return null;
}

/**
 * `--issue N`: the issue's planning (seed 004) is made with `relais plan --issue N` in a checkout
 * of the repository, and lives in its relais/planner/ (not in git). The run takes it from there:
 * the repository's own folder when it is a local path, else the folder submit runs in. It must be
 * ready for the spec, as `ralphy start --issue` requires.
 */
async function plannedIssue(request: SubmitRequest, repo: string): Promise<FleetResult<string>> {
  const issue = request.issue as number;
  const checkout = isAbsolute(repo) && existsSync(join(repo, '.git')) ? repo : request.cwd;
  const plannerDir = join(checkout, 'relais', 'planner');
  const fix = `In a checkout of the repository: relais plan --issue ${issue} (again after each reply on the issue) until it says "ready for the spec"; submit from that checkout.`;
  const text = await readFile(join(plannerDir, 'sessions', `issue-${issue}.json`), 'utf8').catch(() => null);
  if (text === null)
    return fail(
      `issue #${issue} has not been planned in ${checkout} (no relais/planner/sessions/issue-${issue}.json)`,
      fix,
    );
  let status: unknown;
  try {
    status = (JSON.parse(text) as { status?: unknown }).status;
  } catch {
    return fail(`relais/planner/sessions/issue-${issue}.json in ${checkout} is not JSON`, fix);
  }
  if (status !== 'ready')
    return fail(`issue #${issue}'s planning is not ready for the spec yet (${String(status)})`, fix);
  const snapshot = await snapshotPlanner(checkout);
  return snapshot === null ? fail(`cannot read ${plannerDir}`, fix) : { ok: true, value: snapshot };
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
  /** `answer` carries `text`; `approve` on a question goes on without an answer. */
  readonly decision: 'approve' | 'reject' | 'answer';
  readonly reason: string | null;
  readonly text: string | null;
  readonly by: string;
}

export async function approveFleetRun(
  request: ApproveRequest,
): Promise<FleetResult<{ gate: string; wait: string; title: string }>> {
  return connected(request.db, async () => {
    const row = await withPool(request.db, async (pool) => {
      await ensureSchema(pool);
      return readRun(pool, request.runId);
    });
    if (!row) return fail(`no fleet run ${request.runId}`, 'relais fleet status lists the runs.');
    const wait = row.gate_wait && row.gate_json ? (JSON.parse(row.gate_json) as GateWait) : null;
    if (!wait)
      return fail(
        `run ${request.runId} waits at no gate (it is ${row.status}, ${row.state})`,
        'Answer when relais fleet status shows it waiting.',
      );
    if (request.decision === 'answer' && wait.answer === 'yes_no')
      return fail(
        `the ${wait.gate} gate of ${request.runId} asks yes or no ("${wait.title}")`,
        `relais approve ${request.runId} --yes, or --no --reason "why".`,
      );
    const reply: GateReply = {
      wait: wait.id,
      decision: request.decision,
      reason: request.reason,
      text: request.text,
      by: request.by,
    };
    // One answer per wait: the same answer sent twice is one message, and the wait takes the first.
    await withClient(request.db, (client) =>
      client.send(request.runId, reply, GATE_TOPIC, `${request.runId}:${wait.id}`),
    );
    return { gate: wait.gate, wait: wait.id, title: wait.title };
  });
}

export type FleetStatus = FleetSnapshot;

export async function fleetStatus(db: string, env: NodeJS.ProcessEnv): Promise<FleetResult<FleetStatus>> {
  return connected(db, () =>
    withPool(db, async (pool) => {
      await ensureSchema(pool);
      return readFleetSnapshot(pool, env);
    }),
  );
}

/** One reading of the fleet (the status command, and the app's fleet view every second or so). */
export async function readFleetSnapshot(pool: Pool, env: NodeJS.ProcessEnv): Promise<FleetSnapshot> {
  const { deadAfterMs } = fleetTunables(env);
  const runs = await pool.query<FleetRunSummary & { gate_json: string | null }>(
    `SELECT r.run_id, r.repo, r.state, r.status, r.waiting_gate, r.pr_url, r.detail, r.executor_id, r.gate_json,
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
  const waitingGates = runs.rows.flatMap((r) => {
    if (!r.waiting_gate || !r.gate_json) return [];
    const wait = JSON.parse(r.gate_json) as GateWait;
    return [{ run_id: r.run_id, gate: wait.gate, title: wait.title, answer: wait.answer }];
  });
  return {
    runs: runs.rows.map(({ gate_json: _, ...run }) => run),
    byStatus,
    waitingGates,
    budget: budget.rows[0] ?? { cap_usd: null, spent_usd: 0, reserved_usd: 0 },
    accounts: await listAccounts(pool, rateWindowSeconds(env)),
    workers,
  };
}

/** `relais fleet rate <account> [--per-minute N]`: that account's calls per minute (none: no limit). */
export async function setFleetRate(
  db: string,
  account: string,
  perMinute: number | null,
): Promise<FleetResult<null>> {
  return connected(db, () =>
    withPool(db, async (pool) => {
      await ensureSchema(pool);
      await setAccountRate(pool, account, perMinute);
      return null;
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
    const dbos = await dbosSchemaProgress(pool);
    checks.push(
      dbos.applied >= dbos.wanted
        ? { name: 'DBOS schema', ok: true, detail: `all ${dbos.wanted} DBOS migrations applied`, fix: null }
        : {
            name: 'DBOS schema',
            ok: false,
            detail:
              dbos.applied === 0
                ? 'no DBOS system tables: no worker has started on this database'
                : `${dbos.applied} of ${dbos.wanted} DBOS migrations applied: a worker is creating them, or stopped halfway`,
            fix: 'Start a worker: relais worker --db <url> (it creates or finishes them).',
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
