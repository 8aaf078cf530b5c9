import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reserve, setBudgetCap, settle } from '../../source/engine/fleet/budget.js';
import { ensureDbosSchema, ensureSchema, openPool } from '../../source/engine/fleet/store.js';
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
