import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  COSTS,
  type FleetProject,
  fleetProject,
  prCreates,
  relais,
  remoteBranches,
  remoteLog,
  until,
} from '../support/fleet.js';
import { FleetHarness } from '../support/fleet-harness.js';

// Issue 20: the fleet on DBOS durable workflows over a REAL PostgreSQL (started here), real
// worker processes of the built CLI, the scripted agent, a local bare remote per repository and
// a recording gh. Run `npm run build` first.

const fleet = new FleetHarness();
const { projects } = fleet;

beforeAll(() => fleet.setUp());
afterAll(() => fleet.tearDown());

const workerEnv = (project: FleetProject) => fleet.workerEnv(project);
const startWorker = (db: string, id: string, env: NodeJS.ProcessEnv, concurrency = 3) =>
  fleet.startWorker(db, id, env, concurrency);
const result = (db: string, runId: string) => fleet.result(db, runId, 280_000);
const diagnose = (db: string) => fleet.diagnose(db);

interface LedgerEntry {
  run_id: string;
  role: string;
  spent: number;
  reserved: number;
  settled: boolean;
  abandoned: boolean;
}

async function ledger(db: string): Promise<{ entries: LedgerEntry[]; spent: number; reserved: number }> {
  const client = new pg.Client({ connectionString: db });
  await client.connect();
  try {
    const entries = await client.query<LedgerEntry>(
      'SELECT run_id, role, spent_usd::float8 AS spent, reserved_usd::float8 AS reserved, settled, abandoned FROM relais_fleet.ledger',
    );
    const budget = await client.query(
      'SELECT spent_usd::float8 AS spent, reserved_usd::float8 AS reserved FROM relais_fleet.budget',
    );
    return { entries: entries.rows, spent: budget.rows[0].spent, reserved: budget.rows[0].reserved };
  } finally {
    await client.end();
  }
}

/**
 * Exactly once in the ledger: every agent call the scripted model saw has one entry, and only a
 * call the kill cut off may have one the model never saw; a call that finished is counted at what
 * it cost; a call cut off by the kill (its worker died
 * before it could settle) is closed by the next attempt at its reservation, the most it could
 * cost, never released; the budget's totals are the entries' sum and nothing stays reserved.
 */
async function expectLedgerExactlyOnce(db: string, runs: Array<{ runId: string; project: FleetProject }>) {
  const { entries, spent, reserved } = await ledger(db);
  let abandoned = 0;
  for (const { runId, project } of runs) {
    const mine = entries.filter((e) => e.run_id === runId);
    // Every call the scripted model saw has its entry. A call the kill cut off may never have
    // reached the model: its sandbox dies with its worker (unsandboxed, the orphaned agent went on
    // and reached it). Its entry must then be an abandoned one, never a finished one.
    const seen = project.calls().length;
    expect(mine.length, `${runId}: one ledger entry per agent call`).toBeGreaterThanOrEqual(seen);
    expect(
      mine.length - seen,
      `${runId}: an entry beyond the calls the model saw is an abandoned one`,
    ).toBeLessThanOrEqual(mine.filter((e) => e.abandoned).length);
    for (const entry of mine) {
      expect(entry.settled).toBe(true);
      if (entry.abandoned) expect(entry.spent).toBeCloseTo(entry.reserved, 9);
      else expect(entry.spent).toBeCloseTo(COSTS[entry.role as keyof typeof COSTS], 9);
    }
    for (const role of ['spec', 'dev', 'qa'])
      expect(
        mine.filter((e) => e.role === role && !e.abandoned).length,
        `${runId}: ${role} finished`,
      ).toBeGreaterThan(0);
    abandoned += mine.filter((e) => e.abandoned).length;
  }
  expect(spent).toBeCloseTo(
    entries.reduce((sum, e) => sum + e.spent, 0),
    9,
  );
  expect(reserved).toBeCloseTo(0, 9);
  return { abandoned };
}

describe('fleet on DBOS + PostgreSQL', () => {
  it('two workers, six runs, one worker SIGKILLed mid-implementation: each run completes exactly once', async () => {
    const db = fleet.postgres.database('six');
    const release = join(fleet.scratch, 'release');
    const six = Array.from({ length: 6 }, () => fleetProject({ releaseFile: release }));
    projects.push(...six);
    const env = workerEnv(six[0] as FleetProject);
    const a = startWorker(db, 'worker-a', env);
    const b = startWorker(db, 'worker-b', env);
    await until(db, 'SELECT executor_id FROM relais_fleet.workers', (rows) => rows.length === 2);
    const submits = await Promise.all(
      six.map(
        (project) =>
          relais(['submit', project.remote, '--db', db, '--yes', '--json'], env, fleet.scratch).done,
      ),
    );
    const runIds = submits.map((submitted) => {
      expect(submitted.code, submitted.stderr).toBe(0);
      return JSON.parse(submitted.stdout).run_id as string;
    });
    // Worker A is mid-implementation: one of its dev agents has started (and is held).
    const devOnA = () =>
      six.some((p) => p.calls().some((c) => c.role === 'dev' && String(c.cwd).includes('/worker-a/')));
    await until(db, 'SELECT 1', () => devOnA(), 240_000).catch(async (error) => {
      throw new Error(`${error}\n${await diagnose(db)}`);
    });
    a.signal('SIGKILL');
    const killed = await a.done;
    expect(killed.signal).toBe('SIGKILL');
    writeFileSync(release, 'go');
    const finished = await Promise.all(runIds.map((runId) => result(db, runId)));
    for (const end of finished) expect(end).toMatchObject({ status: 'completed', state: 'COMPLETED' });

    for (const project of six) {
      const branches = remoteBranches(project);
      expect(branches, 'one feature branch per run').toHaveLength(1);
      const branch = branches[0] as string;
      expect(remoteLog(project, branch)).toEqual([
        'ralphy: specification and tasks for "Greeting service"',
        'ralphy: implementation of "Greeting service" (dev-agent)',
        'ralphy: QA report for "Greeting service"',
      ]);
      const creates = prCreates(project);
      expect(creates, 'one pull request per run').toHaveLength(1);
      expect(creates[0]).toContain(branch);
    }
    const taken = await until<{ taken_over_by: string | null }>(
      db,
      "SELECT taken_over_by FROM relais_fleet.workers WHERE executor_id = 'worker-a'",
      (rows) => rows.length === 1,
    );
    expect(taken[0]?.taken_over_by).toBe('worker-b');
    // Worker A's held dev call never finished: its step ran again on B.
    const rerun = six.filter((p) => p.calls().filter((c) => c.role === 'dev').length === 2);
    expect(rerun.length).toBeGreaterThan(0);
    const { abandoned } = await expectLedgerExactlyOnce(
      db,
      runIds.map((runId, i) => ({ runId, project: six[i] as FleetProject })),
    );
    expect(abandoned, 'the held dev call cut off on A is counted once, at its reservation').toBeGreaterThan(
      0,
    );
    // B stayed alive and in charge all along: it never lost its lease.
    expect(b.output()).not.toContain('lost its lease');
    b.signal('SIGTERM');
    expect((await b.done).code).toBe(0);
  }, 600_000);

  it('a worker stalled long enough to be declared dead (SIGSTOP) does nothing once it wakes: the run completes once, on the survivor', async () => {
    const db = fleet.postgres.database('stall');
    const release = join(fleet.scratch, 'release-stall');
    const project = fleetProject({ releaseFile: release });
    projects.push(project);
    // A short lease: the stall below outlasts it by far.
    const env = {
      ...workerEnv(project),
      RELAIS_FLEET_HEARTBEAT_MS: '300',
      RELAIS_FLEET_DEAD_AFTER_MS: '3000',
    };
    const workers = {
      'stall-a': startWorker(db, 'stall-a', env, 1),
      'stall-b': startWorker(db, 'stall-b', env, 1),
    };
    await until(db, 'SELECT executor_id FROM relais_fleet.workers', (rows) => rows.length === 2);
    const submitted = await relais(
      ['submit', project.remote, '--db', db, '--yes', '--json'],
      env,
      fleet.scratch,
    ).done;
    expect(submitted.code, submitted.stderr).toBe(0);
    const runId = JSON.parse(submitted.stdout).run_id as string;
    // The run's dev agent is at work (held) on one worker: that worker freezes, as a paused VM does.
    const heldOn = () => {
      const dev = project.calls().find((c) => c.role === 'dev');
      return dev ? (String(dev.cwd).includes('/stall-a/') ? 'stall-a' : 'stall-b') : null;
    };
    await until(db, 'SELECT 1', () => heldOn() !== null, 120_000);
    const stalledId = heldOn() as 'stall-a' | 'stall-b';
    const survivorId = stalledId === 'stall-a' ? 'stall-b' : 'stall-a';
    const stalled = workers[stalledId];
    stalled.signal('SIGSTOP');
    try {
      await until<{ taken_over_by: string | null; takeover_done: boolean }>(
        db,
        `SELECT taken_over_by, takeover_done FROM relais_fleet.workers WHERE executor_id = '${stalledId}'`,
        (rows) => rows[0]?.taken_over_by === survivorId && rows[0]?.takeover_done === true,
        120_000,
      );
      // Its held agent finishes while it sleeps; the survivor runs the step again meanwhile.
      writeFileSync(release, 'go');
      expect(await result(db, runId)).toMatchObject({ status: 'completed', state: 'COMPLETED' });
    } finally {
      stalled.signal('SIGCONT');
    }
    // Awake, it learns it lost its lease and stops, without one more side effect.
    const woke = await stalled.done;
    expect(woke.code, woke.stderr).toBe(1);
    expect(stalled.output()).toContain('lost its lease');
    const [branch, ...others] = remoteBranches(project);
    expect(others, 'one feature branch').toEqual([]);
    expect(remoteLog(project, branch as string)).toEqual([
      'ralphy: specification and tasks for "Greeting service"',
      'ralphy: implementation of "Greeting service" (dev-agent)',
      'ralphy: QA report for "Greeting service"',
    ]);
    expect(prCreates(project), 'one pull request').toHaveLength(1);
    expect(project.calls().filter((c) => c.role === 'dev')).toHaveLength(2);
    const { abandoned } = await expectLedgerExactlyOnce(db, [{ runId, project }]);
    expect(abandoned, "the stalled worker's dev call, counted once at its reservation").toBe(1);
    const survivor = workers[survivorId];
    survivor.signal('SIGTERM');
    expect((await survivor.done).code).toBe(0);
  }, 300_000);
  it('a gate waits in the database and is answered from a third process with relais approve', async () => {
    const db = fleet.postgres.database('gate');
    const project = fleetProject();
    projects.push(project);
    const env = workerEnv(project);
    const worker = startWorker(db, 'gate-worker', env, 1);
    const submitted = await relais(['submit', project.remote, '--db', db, '--json'], env, fleet.scratch).done;
    expect(submitted.code, submitted.stderr).toBe(0);
    const runId = JSON.parse(submitted.stdout).run_id as string;
    const gateOf = `SELECT waiting_gate FROM relais_fleet.runs WHERE run_id = '${runId}'`;
    await until<{ waiting_gate: string | null }>(db, gateOf, (rows) => rows[0]?.waiting_gate === 'spec');
    const status = await relais(['fleet', 'status', '--db', db, '--json'], env, fleet.scratch).done;
    expect(JSON.parse(status.stdout).waitingGates).toEqual([
      expect.objectContaining({ run_id: runId, gate: 'spec', answer: 'yes_no' }),
    ]);
    const approved = await relais(['approve', runId, '--yes', '--db', db], env, fleet.scratch).done;
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain('Approved the spec gate');
    await until<{ waiting_gate: string | null }>(db, gateOf, (rows) => rows[0]?.waiting_gate === 'qa');
    expect(project.calls().map((c) => c.role)).toEqual(['spec', 'dev', 'qa']);
    expect(prCreates(project), 'no pull request before the QA gate is answered').toHaveLength(0);
    expect((await relais(['approve', runId, '--yes', '--db', db], env, fleet.scratch).done).code).toBe(0);
    expect(await result(db, runId)).toMatchObject({ status: 'completed', state: 'COMPLETED' });
    expect(prCreates(project)).toHaveLength(1);
    // No gate waits now: a clear error, nothing sent.
    const late = await relais(['approve', runId, '--no', '--db', db], env, fleet.scratch).done;
    expect(late.code).toBe(1);
    expect(late.stderr).toContain(`run ${runId} waits at no gate`);
    worker.signal('SIGTERM');
    const stopped = await worker.done;
    expect(stopped.code).toBe(0);
    // One owner of interrupts (cli/engine-session.ts), in the worker's own line format.
    expect(stopped.stderr).toContain('[worker] SIGTERM received: stopping the worker');
  }, 150_000);

  it('the fleet budget holds across two workers: a call it cannot cover never starts', async () => {
    const db = fleet.postgres.database('budget');
    const two = [0, 1].map(() =>
      fleetProject({ configure: (config) => (config.workflow.agent_max_budget_usd = 0.25) }),
    );
    projects.push(...two);
    const env = workerEnv(two[0] as FleetProject);
    const cap = 0.5;
    const set = await relais(['fleet', 'budget', '--usd', String(cap), '--db', db], env, fleet.scratch).done;
    expect(set.code, set.stderr).toBe(0);
    const workers = [startWorker(db, 'budget-a', env, 1), startWorker(db, 'budget-b', env, 1)];
    // Both workers up (their DBOS schema made) before anything is queued, as in the six-run test:
    // a submit racing the workers' first migration can fail (docs/fleet.md, hardening not done).
    await until(db, 'SELECT executor_id FROM relais_fleet.workers', (rows) => rows.length === 2);
    const runIds: string[] = [];
    for (const project of two) {
      const submitted = await relais(
        ['submit', project.remote, '--db', db, '--yes', '--json'],
        env,
        fleet.scratch,
      ).done;
      expect(submitted.code, submitted.stderr).toBe(0);
      runIds.push(JSON.parse(submitted.stdout).run_id);
    }
    const ends = await Promise.all(runIds.map((runId) => result(db, runId)));
    expect(ends.map((e) => e.status)).toContain('budget_exhausted');
    const client = new pg.Client({ connectionString: db });
    await client.connect();
    const budget = (
      await client.query(
        'SELECT spent_usd::float8 AS spent, reserved_usd::float8 AS reserved FROM relais_fleet.budget',
      )
    ).rows[0];
    const entries = (
      await client.query('SELECT spent_usd::float8 AS spent, settled FROM relais_fleet.ledger')
    ).rows;
    await client.end();
    expect(budget.spent + budget.reserved).toBeLessThanOrEqual(cap + 1e-9);
    expect(budget.reserved).toBeCloseTo(0, 6);
    expect(entries.every((e) => e.settled)).toBe(true);
    expect(entries.reduce((sum, e) => sum + e.spent, 0)).toBeCloseTo(budget.spent, 6);
    // Both runs could not finish under the cap: fewer agent calls happened than two runs need.
    const calls = two.flatMap((p) => p.calls());
    expect(calls.length).toBeLessThan(6);
    for (const worker of workers) worker.signal('SIGTERM');
    await Promise.all(workers.map((w) => w.done));
  }, 150_000);
});
