import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/fleet.js';
import { FleetHarness } from '../support/fleet-harness.js';

// Issue 20: `relais fleet doctor` against a REAL PostgreSQL (a good database, a wrong address, a
// database no worker ever used, one whose workers are gone), and the submits the fleet refuses
// (each with its reason and its fix, and nothing queued). The built CLI: `npm run build` first.

const fleet = new FleetHarness();
beforeAll(() => fleet.setUp());
afterAll(() => fleet.tearDown());

const doctor = (db: string, ...extra: string[]) =>
  fleet.cli(['fleet', 'doctor', '--db', db, ...extra], fleet.workerEnv(null));

describe('relais fleet doctor', () => {
  it('a wrong address: the connection fails with its fix, and a password never shows', async () => {
    const closed = `postgresql://relais:s3cret-word@127.0.0.1:1/relais`;
    const done = await doctor(closed);
    expect(done.code).toBe(1);
    expect(done.stdout).toContain('FAIL connection: cannot connect');
    expect(done.stdout).toContain('Fix: Start Postgres (docker compose up -d)');
    expect(done.stdout + done.stderr).not.toContain('s3cret-word');
  });

  it('a database no worker ever used: both schemas are missing, each with its fix (--json too)', async () => {
    const db = fleet.postgres.database('empty');
    const done = await doctor(db);
    expect(done.code).toBe(1);
    expect(done.stdout).toContain('ok   connection: PostgreSQL 15');
    expect(done.stdout).toContain(
      'FAIL DBOS schema: no DBOS system tables: no worker has started on this database',
    );
    expect(done.stdout).toContain('FAIL fleet schema: no relais_fleet tables yet');
    const json = JSON.parse((await doctor(db, '--json')).stdout);
    expect(json.checks.map((c: { name: string; ok: boolean }) => [c.name, c.ok])).toEqual([
      ['connection', true],
      ['DBOS schema', false],
      ['fleet schema', false],
    ]);
  });

  it('a worker alive: every check passes; once it stopped, "no worker alive" with the command that starts one', async () => {
    const db = fleet.postgres.database('alive');
    const env = fleet.workerEnv(null);
    const worker = fleet.startWorker(db, 'doctor-worker', env, 1);
    await until(
      db,
      "SELECT 1 FROM relais_fleet.workers WHERE executor_id = 'doctor-worker'",
      (r) => r.length === 1,
    );
    await until(db, 'SELECT 1 FROM dbos.dbos_migrations', (r) => r.length > 0);
    // The worker migrates, then launches: the doctor waits for nothing, so ask until it is up.
    let good = await doctor(db);
    for (let i = 0; good.code !== 0 && i < 50; i++) good = await doctor(db);
    expect(good.code, good.stdout).toBe(0);
    expect(good.stdout).toMatch(/ok {3}DBOS schema: all \d+ DBOS migrations applied/);
    expect(good.stdout).toContain('ok   fleet schema: relais_fleet tables are there');
    expect(good.stdout).toMatch(/ok {3}workers: 1 alive: doctor-worker \(\d+ ms ago\)/);
    worker.signal('SIGTERM');
    expect((await worker.done).code).toBe(0);
    const gone = await doctor(db);
    expect(gone.code).toBe(1);
    expect(gone.stdout).toContain('FAIL workers: no worker alive (1 known)');
    expect(gone.stdout).toContain('Fix: Start one on any machine: relais worker --db <url>.');
  }, 120_000);
});

describe('relais submit refuses what the fleet cannot run, with the reason, and queues nothing', () => {
  it.each([
    [
      ['--parallel', '2', '--engine', 'single'],
      '--parallel 2 runs tasks in lanes of the ticks engine, not the single engine',
    ],
    [['--parallel', '17'], '--parallel 17: lanes are a whole number from 1 to 16'],
    [['--engine', 'turbo'], '--engine turbo is not an engine'],
    [['--prd', 'PRD.md', '--issue', '3'], '--prd and --issue both say what to build'],
    [['--issue', '12'], 'issue #12 has not been planned in'],
  ])('submit %j', async (args, message) => {
    const db = fleet.postgres.database('refusals');
    const repo = join(fleet.scratch, 'some-repo');
    mkdirSync(repo, { recursive: true });
    writeFileSync(join(fleet.scratch, 'PRD.md'), '# A PRD\n');
    const done = await fleet.cli(['submit', repo, ...args, '--db', db], fleet.workerEnv(null));
    expect(done.code).toBe(2);
    expect(done.stderr).toContain(message);
    expect(done.stderr).toContain('Fix: ');
    const tables = await fleet.query<{ t: string | null }>(
      db,
      "SELECT to_regclass('relais_fleet.runs')::text AS t",
    );
    if (tables[0]?.t) expect(await fleet.query(db, 'SELECT 1 FROM relais_fleet.runs')).toEqual([]);
  });

  it('an issue planned but not ready yet is refused with the command that moves it on', async () => {
    const db = fleet.postgres.database('refusals');
    const checkout = join(fleet.scratch, 'planned');
    mkdirSync(join(checkout, 'relais', 'planner', 'sessions'), { recursive: true });
    writeFileSync(
      join(checkout, 'relais', 'planner', 'sessions', 'issue-9.json'),
      JSON.stringify({ status: 'asking' }),
    );
    const done = await fleet.cli(
      ['submit', 'git@github.com:me/app.git', '--issue', '9', '--db', db],
      fleet.workerEnv(null),
      checkout,
    );
    expect(done.code).toBe(2);
    expect(done.stderr).toContain("issue #9's planning is not ready for the spec yet (asking)");
    expect(done.stderr).toContain('relais plan --issue 9');
  });
});
