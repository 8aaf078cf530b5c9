import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeAbandoned, reserve, setBudgetCap, settle } from '../../source/engine/fleet/budget.js';
import { FencedError } from '../../source/engine/fleet/fence.js';
import { holdLease } from '../../source/engine/fleet/lease.js';
import { ensureDbosSchema, ensureSchema, openPool, updateRun } from '../../source/engine/fleet/store.js';
import { beat, claimDeadWorker, finishTakeover, registerWorker } from '../../source/engine/fleet/workers.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';

// Issue 20: the fleet's own tables on a REAL PostgreSQL: the budget's reservations are taken in
// a transaction (no two workers take the last dollars), a dead worker is claimed by exactly one
// survivor, and a worker that was taken over cannot heartbeat again (it fences itself).

let postgres: TestPostgres;
let pool: Pool;

beforeAll(async () => {
  postgres = await startPostgres();
  pool = await openPool(postgres.url);
  await ensureSchema(pool);
  await ensureSchema(pool); // idempotent
});

afterAll(async () => {
  await pool?.end();
  postgres?.stop();
});

const budget = async () =>
  (
    await pool.query(
      'SELECT cap_usd::float8 AS cap, spent_usd::float8 AS spent, reserved_usd::float8 AS reserved FROM relais_fleet.budget',
    )
  ).rows[0];

describe('fleet budget', () => {
  it('ten concurrent reservations against room for four: exactly four are granted', async () => {
    await setBudgetCap(pool, 1);
    const grants = await Promise.all(
      Array.from({ length: 10 }, (_, i) => reserve(pool, { runId: `run-${i}`, key: 'step0:1', usd: 0.25 })),
    );
    expect(grants.filter((g) => g.ok)).toHaveLength(4);
    const refused = grants.find((g) => !g.ok);
    expect(refused && !refused.ok && refused.detail).toContain('cannot cover');
    expect(await budget()).toMatchObject({ spent: 0, reserved: 1 });
    // Settling replaces each reservation by what the call cost: room again.
    for (const [i, g] of grants.entries()) if (g.ok) await settle(pool, `run-${i}`, 'step0:1', 0.1);
    expect((await budget()).reserved).toBeCloseTo(0, 9);
    expect((await budget()).spent).toBeCloseTo(0.4, 9);
  });

  it('the same call reserved again (its step re-ran after a kill) replaces its entry, never adds one', async () => {
    await pool.query('TRUNCATE relais_fleet.ledger');
    await pool.query('UPDATE relais_fleet.budget SET spent_usd = 0, reserved_usd = 0, cap_usd = NULL');
    expect((await reserve(pool, { runId: 'run-x', key: 'step1:1', usd: 0.5 })).ok).toBe(true);
    // The worker died before settling; the re-run reserves the same key.
    expect((await reserve(pool, { runId: 'run-x', key: 'step1:1', usd: 0.5 })).ok).toBe(true);
    expect((await budget()).reserved).toBeCloseTo(0.5, 9);
    await settle(pool, 'run-x', 'step1:1', 0.2);
    await settle(pool, 'run-x', 'step1:1', 0.2); // settled twice: once
    const rows = (
      await pool.query("SELECT spent_usd::float8 AS spent FROM relais_fleet.ledger WHERE run_id = 'run-x'")
    ).rows;
    expect(rows).toEqual([{ spent: 0.2 }]);
    expect(await budget()).toMatchObject({ spent: 0.2, reserved: 0 });
  });
});

describe('fleet budget across attempts of a run', () => {
  // A run's attempts are DBOS executions; their owner tokens live in dbos.workflow_status.
  const own = async (runId: string, owner: string) => {
    await ensureDbosSchema(pool, postgres.url);
    await pool.query(
      `INSERT INTO dbos.workflow_status (workflow_uuid, status, name, owner_xid) VALUES ($1, 'PENDING', 'relaisFleetRun', $2)
       ON CONFLICT (workflow_uuid) DO UPDATE SET owner_xid = $2`,
      [runId, owner],
    );
  };

  it("a re-run keeps the dead attempt's spend, closes its cut-off call at its reservation once, and a stale attempt can no longer write", async () => {
    await pool.query('TRUNCATE relais_fleet.ledger');
    await pool.query('UPDATE relais_fleet.budget SET spent_usd = 0, reserved_usd = 0, cap_usd = 1');
    await own('run-k', 'attempt-1');
    const call = (key: string, usd: number, owner: string) => ({ runId: 'run-k', key, usd, owner });
    expect((await reserve(pool, call('attempt-1/step1:1', 0.3, 'attempt-1'))).ok).toBe(true);
    await settle(pool, 'run-k', 'attempt-1/step1:1', 0.2, 'attempt-1');
    // The second call was running when the worker died: reserved, never settled.
    expect((await reserve(pool, call('attempt-1/step1:2', 0.5, 'attempt-1'))).ok).toBe(true);
    // Another worker resumes the run: a new attempt.
    await own('run-k', 'attempt-2');
    await expect(settle(pool, 'run-k', 'attempt-1/step1:2', 0.1, 'attempt-1')).rejects.toBeInstanceOf(
      FencedError,
    );
    await expect(reserve(pool, call('attempt-1/step1:3', 0.1, 'attempt-1'))).rejects.toBeInstanceOf(
      FencedError,
    );
    expect(await closeAbandoned(pool, 'run-k', 'attempt-2')).toEqual({ calls: 1, usd: 0.5 });
    expect(await closeAbandoned(pool, 'run-k', 'attempt-2')).toEqual({ calls: 0, usd: 0 });
    // $0.20 spent and $0.50 cut off are $0.70 of the $1 cap: a $0.50 call does not fit any more.
    expect(await budget()).toMatchObject({ spent: 0.7, reserved: 0 });
    const refused = await reserve(pool, call('attempt-2/step1:1', 0.5, 'attempt-2'));
    expect(refused.ok).toBe(false);
    expect((await reserve(pool, call('attempt-2/step1:1', 0.3, 'attempt-2'))).ok).toBe(true);
    const rows = (
      await pool.query(
        "SELECT call_key, spent_usd::float8 AS spent, settled, abandoned FROM relais_fleet.ledger WHERE run_id = 'run-k' ORDER BY call_key",
      )
    ).rows;
    expect(rows).toEqual([
      { call_key: 'attempt-1/step1:1', spent: 0.2, settled: true, abandoned: false },
      { call_key: 'attempt-1/step1:2', spent: 0.5, settled: true, abandoned: true },
      { call_key: 'attempt-2/step1:1', spent: null, settled: false, abandoned: false },
    ]);
  });

  it("a run's row takes writes from its owner only", async () => {
    await own('run-w', 'owner-1');
    await pool.query(
      "INSERT INTO relais_fleet.runs (run_id, repo, auto_approve) VALUES ('run-w', '/r', false)",
    );
    await updateRun(pool, 'run-w', { detail: 'first' }, 'owner-1');
    await own('run-w', 'owner-2');
    await expect(updateRun(pool, 'run-w', { detail: 'stale' }, 'owner-1')).rejects.toBeInstanceOf(
      FencedError,
    );
    expect((await pool.query("SELECT detail FROM relais_fleet.runs WHERE run_id = 'run-w'")).rows).toEqual([
      { detail: 'first' },
    ]);
  });
});

describe('fleet workers', () => {
  it('a dead worker is claimed by one survivor only, and can no longer heartbeat', async () => {
    const deadGeneration = await registerWorker(pool, 'dead', 'host', 1);
    const s1 = await registerWorker(pool, 's1', 'host', 2);
    await registerWorker(pool, 's2', 'host', 3);
    // Alive: nobody may claim it.
    expect(await claimDeadWorker(pool, 's1', 60_000)).toBeNull();
    await pool.query(
      "UPDATE relais_fleet.workers SET heartbeat_at = now() - interval '1 minute' WHERE executor_id = 'dead'",
    );
    const claims = await Promise.all([
      claimDeadWorker(pool, 's1', 30_000),
      claimDeadWorker(pool, 's2', 30_000),
    ]);
    expect(claims.filter((c) => c === 'dead')).toHaveLength(1);
    expect(await beat(pool, 'dead', deadGeneration)).toBe(false);
    expect(await beat(pool, 's1', s1)).toBe(true);
    // A restart under the same id (a supervisor) starts clean once the takeover is finished.
    const restart = registerWorker(pool, 'dead', 'host', 4);
    await finishTakeover(pool, 'dead');
    const restarted = await restart;
    expect(restarted).toBeGreaterThan(deadGeneration);
    expect(await beat(pool, 'dead', restarted)).toBe(true);
    // The old process of that id, were it still running, holds nothing any more.
    expect(await beat(pool, 'dead', deadGeneration)).toBe(false);
    const row = (
      await pool.query("SELECT pid, taken_over_by FROM relais_fleet.workers WHERE executor_id = 'dead'")
    ).rows[0];
    expect(row).toEqual({ pid: 4, taken_over_by: null });
  });

  it('a takeover claimed but not finished is claimed again: by its claimer, or by anyone once the claimer is dead too', async () => {
    await pool.query('TRUNCATE relais_fleet.workers');
    for (const id of ['gone', 'c1', 'c2']) await registerWorker(pool, id, 'host', 1);
    const stale = (id: string) =>
      pool.query(
        `UPDATE relais_fleet.workers SET heartbeat_at = now() - interval '1 minute' WHERE executor_id = $1`,
        [id],
      );
    await stale('gone');
    expect(await claimDeadWorker(pool, 'c1', 30_000)).toBe('gone');
    // c1's resume failed: the claim stands, and c1 finds it again at its next turn.
    expect(await claimDeadWorker(pool, 'c2', 30_000)).toBeNull();
    expect(await claimDeadWorker(pool, 'c1', 30_000)).toBe('gone');
    // c1 dies before finishing: c2 takes over both, the unfinished one included.
    await stale('c1');
    expect(await claimDeadWorker(pool, 'c2', 30_000)).toBe('gone');
    await finishTakeover(pool, 'gone');
    expect(await claimDeadWorker(pool, 'c2', 30_000)).toBe('c1');
    await finishTakeover(pool, 'c1');
    expect(await claimDeadWorker(pool, 'c2', 30_000)).toBeNull();
  });

  it('the lease: a heartbeat that cannot be written does not stop the worker (side effects wait); a takeover does, and side effects then refuse', async () => {
    await pool.query('TRUNCATE relais_fleet.workers');
    const generation = await registerWorker(pool, 'leased', 'host', 1);
    // The lease's clock is ours to move; its heartbeat timer and the database are real.
    let clock = Date.now();
    const said: Array<{ needle: string; resolve: () => void }> = [];
    const log = (line: string) => {
      for (const w of said.filter((x) => line.includes(x.needle))) w.resolve();
    };
    const saying = (needle: string) => new Promise<void>((resolve) => said.push({ needle, resolve }));
    const lease = holdLease(
      pool,
      'leased',
      generation,
      { heartbeatMs: 50, deadAfterMs: 400 },
      log,
      () => clock,
    );
    try {
      await lease.ready();
      // The database cannot take the heartbeat for a while (a row lock, as a hung network would).
      const blocker = await pool.connect();
      await blocker.query('BEGIN');
      await blocker.query("SELECT 1 FROM relais_fleet.workers WHERE executor_id = 'leased' FOR UPDATE");
      const late = saying('heartbeat timer ran 10 s late');
      clock += 10_000;
      await late;
      // Far past deadAfter without a heartbeat: the worker has not stopped, its side effects wait.
      expect(lease.fenced).toBe(false);
      let ready = false;
      const waiting = lease.ready().then(() => {
        ready = true;
      });
      await Promise.resolve();
      expect(ready).toBe(false);
      await blocker.query('ROLLBACK');
      blocker.release();
      // Nobody claimed it meanwhile: the heartbeat that went through renews the lease.
      await waiting;
      expect(lease.fenced).toBe(false);
      // Taken over: lost at the next heartbeat, and every side effect refuses from then on.
      await pool.query(
        "UPDATE relais_fleet.workers SET taken_over_by = 'someone' WHERE executor_id = 'leased'",
      );
      await lease.lost;
      expect(lease.fenced).toBe(true);
      await expect(lease.ready()).rejects.toThrow('lost its lease');
    } finally {
      lease.dispose();
    }
  });
  it('the lease pool is bounded: a heartbeat blocked on a lock fails and says so instead of holding every later one back', async () => {
    await pool.query('TRUNCATE relais_fleet.workers');
    const bounded = await openPool(postgres.url, 2, { statementMs: 300 });
    const generation = await registerWorker(bounded, 'bounded', 'host', 1);
    const lines: string[] = [];
    const said: Array<{ needle: string; resolve: () => void }> = [];
    const log = (line: string) => {
      lines.push(line);
      for (const w of said.filter((x) => line.includes(x.needle))) w.resolve();
    };
    const saying = (needle: string) => new Promise<void>((resolve) => said.push({ needle, resolve }));
    // The lease's clock is ours: it is past the lease at once, so ready() waits for a heartbeat.
    let clock = Date.now();
    const lease = holdLease(
      bounded,
      'bounded',
      generation,
      { heartbeatMs: 50, deadAfterMs: 400 },
      log,
      () => clock,
    );
    const blocker = await pool.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query("SELECT 1 FROM relais_fleet.workers WHERE executor_id = 'bounded' FOR UPDATE");
      const failed = saying('heartbeat failed: canceling statement due to statement timeout');
      clock += 10_000;
      let ready = false;
      const waiting = lease.ready().then(() => {
        ready = true;
      });
      const held = saying('has waited 0.4 s for the lease: no heartbeat was written meanwhile');
      // Unbounded, this heartbeat would wait on the lock for as long as it is held; bounded, it ends.
      await failed;
      // The side effect held back that long says so in the worker's log.
      await held;
      expect(ready).toBe(false);
      expect(lease.fenced).toBe(false);
      await blocker.query('ROLLBACK');
      // A later heartbeat (not the failed one, long gone) renews the lease.
      await waiting;
      expect(lines.some((l) => l.startsWith('heartbeat written again after'))).toBe(true);
    } finally {
      await blocker.query('ROLLBACK').catch(() => undefined);
      blocker.release();
      lease.dispose();
      await bounded.end();
    }
  });
});

describe("DBOS's system tables", () => {
  const hasCreatorXid = async (p: Pool) =>
    (
      await p.query(
        "SELECT 1 FROM information_schema.columns WHERE table_schema = 'dbos' AND table_name = 'workflow_status' AND column_name = 'creator_xid'",
      )
    ).rowCount === 1;

  it('a half-migrated schema (workflow_status there, later columns not yet) is finished, not taken for done', async () => {
    const url = postgres.database('halfway');
    const half = await openPool(url);
    try {
      // What a client saw in CI while a worker was still migrating: the first migrations applied.
      const { allMigrations } = await import(
        '@dbos-inc/dbos-sdk/internal/sysdb_migrations/internal/migrations'
      );
      const { runSysMigrationsPg } = await import(
        '@dbos-inc/dbos-sdk/internal/sysdb_migrations/migration_runner'
      );
      const client = await half.connect();
      try {
        await runSysMigrationsPg(client, allMigrations('dbos').slice(0, 20), 'dbos', {
          onWarn: () => undefined,
        });
      } finally {
        client.release();
      }
      expect((await half.query("SELECT to_regclass('dbos.workflow_status') AS t")).rows[0].t).not.toBeNull();
      expect(await hasCreatorXid(half)).toBe(false);
      await ensureDbosSchema(half, url);
      expect(await hasCreatorXid(half)).toBe(true);
    } finally {
      await half.end();
    }
  });

  it('three first starts at once: every one returns only once the whole schema is there', async () => {
    const url = postgres.database('racing');
    const pools = await Promise.all([openPool(url), openPool(url), openPool(url)]);
    try {
      await Promise.all(
        pools.map(async (p) => {
          await ensureDbosSchema(p, url);
          expect(await hasCreatorXid(p)).toBe(true);
        }),
      );
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });
});
