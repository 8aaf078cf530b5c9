import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FleetProject,
  fleetProject,
  prCreates,
  remoteBranches,
  remoteLog,
  until,
} from '../support/fleet.js';
import { FleetHarness } from '../support/fleet-harness.js';
import { lanesScenario } from '../support/lanes.js';
import { happyScenario } from '../support/workflow.js';

// Issue 20: what `relais submit` asks for reaches the run (--engine, --parallel), and the queue's
// limits hold across workers: one writer per repository, the global cap, each model account's
// rate. REAL PostgreSQL, worker processes of the built CLI, the scripted fake-claude, a bare
// remote per repository and a recording gh. `npm run build` first.

const fleet = new FleetHarness();
beforeAll(() => fleet.setUp());
afterAll(() => fleet.tearDown());

type DbosRun = { workflow_uuid: string; status: string };
const dbosRuns = (db: string) =>
  fleet.query<DbosRun>(db, 'SELECT workflow_uuid, status FROM dbos.workflow_status ORDER BY created_at');

describe('relais submit through the fleet', () => {
  it('--engine ticks --parallel 2 on a project configured for the single engine: the ticks engine runs the tasks in two lanes', async () => {
    const db = fleet.postgres.database('engine');
    const project = fleet.track(fleetProject());
    project.scenario(lanesScenario([{}, {}]) as never);
    const env = fleet.workerEnv(project);
    const worker = fleet.startWorker(db, 'engine-worker', env, 1);
    const runId = await fleet.submit(
      db,
      [project.remote, '--engine', 'ticks', '--parallel', '2', '--yes'],
      env,
    );
    expect(await fleet.result(db, runId)).toMatchObject({ status: 'completed', state: 'COMPLETED' });

    const roles = project.calls().map((c) => c.role);
    expect(roles.filter((r) => r === 'orchestrator')).toHaveLength(2);
    expect(roles.filter((r) => r === 'builder')).toHaveLength(2);
    expect(roles).not.toContain('dev');
    const [row] = await fleet.query<{ workflow_json: string }>(
      db,
      'SELECT workflow_json FROM relais_fleet.runs',
    );
    expect(JSON.parse(row?.workflow_json as string)).toMatchObject({ engine: 'ticks', tasks_completed: 2 });
    // The lanes ran at once: the run's events, kept in the database, say so.
    const events = await fleet.query<{ event: { type: string; lane?: string; phase?: string } }>(
      db,
      "SELECT event FROM relais_fleet.events WHERE run_id = $1 AND event->>'type' = 'lane.changed' ORDER BY seq",
      [runId],
    );
    let running = 0;
    let most = 0;
    for (const { event } of events) {
      if (event.phase === 'started') running++;
      if (event.phase === 'landed' || event.phase === 'failed' || event.phase === 'kept') running--;
      most = Math.max(most, running);
    }
    expect(most).toBe(2);
    const [branch] = remoteBranches(project);
    expect(remoteLog(project, branch as string)).toEqual(
      expect.arrayContaining(['relais(T1): Write src/a.ts', 'relais(T2): Write src/b.ts']),
    );
    expect(prCreates(project)).toHaveLength(1);
    worker.signal('SIGTERM');
    expect((await worker.done).code).toBe(0);
  }, 240_000);

  it('--engine ticks alone: the orchestrator and builder implement each task, one at a time', async () => {
    const db = fleet.postgres.database('ticks');
    const project = fleet.track(fleetProject());
    project.scenario(happyScenario());
    const env = fleet.workerEnv(project);
    const worker = fleet.startWorker(db, 'ticks-worker', env, 1);
    const runId = await fleet.submit(db, [project.remote, '--engine', 'ticks', '--yes'], env);
    expect(await fleet.result(db, runId)).toMatchObject({ status: 'completed', state: 'COMPLETED' });
    const roles = project.calls().map((c) => c.role);
    expect(roles).toEqual(['spec', 'orchestrator', 'builder', 'orchestrator', 'builder', 'qa']);
    worker.signal('SIGTERM');
    await worker.done;
  }, 240_000);

  it('--engine cycle: each task goes through the deadf cycle (implement, the six checks, a verifier per criterion) on the worker', async () => {
    const db = fleet.postgres.database('cycle');
    // The cycle's three roles on Claude Code (here the scripted fake-claude): the implementer is a
    // builder run, the verifier a plan-mode run answering each criterion with this cycle's nonce.
    const project = fleet.track(
      fleetProject({
        configure: (config) => {
          config.cycle = {
            mode: 'yolo',
            verify: { tests: ['ok'], lint: [] },
            agents: {
              planner: { provider: 'claude', model: 'opus' },
              implementer: { provider: 'claude', model: 'opus' },
              verifier: { provider: 'claude', model: 'opus' },
            },
          };
        },
      }),
    );
    const scenario = happyScenario();
    project.scenario({
      spec: scenario.spec,
      qa: scenario.qa,
      builder: [
        {
          actions: [{ write: 'src/a.ts', content: 'export const greet = (n: string) => "Hello, " + n;\n' }],
          result: 'Implemented.',
        },
        {
          actions: [{ write: 'src/b.ts', content: 'export const bye = (n: string) => "Bye, " + n;\n' }],
          result: 'Implemented.',
        },
      ],
      orchestrator: Array.from({ length: 8 }, () => ({ cycle_verdict: 'YES' })),
    } as never);
    const env = fleet.workerEnv(project);
    const worker = fleet.startWorker(db, 'cycle-worker', env, 1);
    const runId = await fleet.submit(db, [project.remote, '--engine', 'cycle', '--yes'], env);
    expect(await fleet.result(db, runId)).toMatchObject({ status: 'completed', state: 'COMPLETED' });
    const [row] = await fleet.query<{ workflow_json: string }>(
      db,
      'SELECT workflow_json FROM relais_fleet.runs',
    );
    expect(JSON.parse(row?.workflow_json as string)).toMatchObject({ engine: 'cycle', tasks_completed: 2 });
    const events = await fleet.query<{ n: number }>(
      db,
      "SELECT COUNT(*)::int AS n FROM relais_fleet.events WHERE run_id = $1 AND event->>'type' = 'cycle.decided'",
      [runId],
    );
    expect(events[0]?.n).toBeGreaterThan(0);
    const [branch] = remoteBranches(project);
    expect(remoteLog(project, branch as string)).toEqual(
      expect.arrayContaining(['relais(T1): Greet by name', 'relais(T2): Say goodbye']),
    );
    const roles = project.calls().map((c) => c.role);
    expect(roles.filter((r) => r === 'builder')).toHaveLength(2);
    expect(
      roles.filter((r) => r === 'orchestrator').length,
      'the verifier judged each task',
    ).toBeGreaterThanOrEqual(2);
    // Every cycle call went through the fleet's ledger too.
    const ledger = await fleet.query<{ n: number }>(db, 'SELECT COUNT(*)::int AS n FROM relais_fleet.ledger');
    expect(ledger[0]?.n).toBe(project.calls().length);
    worker.signal('SIGTERM');
    await worker.done;
  }, 240_000);

  it('one writer per repository: a second run of a repository waits while the first works, even with a worker slot free', async () => {
    const db = fleet.postgres.database('writer');
    const release = join(fleet.scratch, 'release-writer');
    const same = fleet.track(fleetProject({ releaseFile: release }));
    const other = fleet.track(fleetProject({ releaseFile: release }));
    const env = fleet.workerEnv(same);
    const worker = fleet.startWorker(db, 'writer-worker', env, 2);
    const first = await fleet.submit(db, [same.remote, '--yes'], env);
    await until(db, 'SELECT 1', () => same.calls().some((c) => c.role === 'dev'), 120_000);
    const second = await fleet.submit(db, [same.remote, '--yes'], env);
    const third = await fleet.submit(db, [other.remote, '--yes'], env);
    // The worker's free slot took the run submitted after the second (another repository)...
    await until(db, 'SELECT 1', () => other.calls().some((c) => c.role === 'spec'), 120_000);
    // ...but not the second: its repository has a writer already.
    const states = new Map((await dbosRuns(db)).map((r) => [r.workflow_uuid, r.status]));
    expect([states.get(first), states.get(second), states.get(third)]).toEqual([
      'PENDING',
      'ENQUEUED',
      'PENDING',
    ]);
    expect(same.calls().filter((c) => c.role === 'spec')).toHaveLength(1);
    writeFileSync(release, 'go');
    for (const runId of [first, second, third])
      expect(await fleet.result(db, runId)).toMatchObject({ status: 'completed' });
    // Two runs of one repository: two branches, each with its own commits, two pull requests.
    expect(remoteBranches(same)).toHaveLength(2);
    expect(prCreates(same)).toHaveLength(2);
    worker.signal('SIGTERM');
    await worker.done;
  }, 300_000);

  it('--global-concurrency 1: two workers with room for two runs each never execute two runs at once', async () => {
    const db = fleet.postgres.database('cap');
    const three = [0, 1, 2].map(() => fleet.track(fleetProject()));
    const env = fleet.workerEnv(three[0] as FleetProject);
    const workers = [
      fleet.startWorker(db, 'cap-a', env, 2, ['--global-concurrency', '1']),
      fleet.startWorker(db, 'cap-b', env, 2, ['--global-concurrency', '1']),
    ];
    await until(db, 'SELECT executor_id FROM relais_fleet.workers', (rows) => rows.length === 2);
    const runIds = [];
    for (const project of three) runIds.push(await fleet.submit(db, [project.remote, '--yes'], env));
    // Sampled while they run: never two executing (PENDING) at once, until all three are done.
    let most = 0;
    await until<DbosRun>(
      db,
      'SELECT workflow_uuid, status FROM dbos.workflow_status',
      (rows) => {
        most = Math.max(most, rows.filter((r) => r.status === 'PENDING').length);
        return rows.length === 3 && rows.every((r) => r.status === 'SUCCESS');
      },
      240_000,
    ).catch(async (error) => {
      throw new Error(`${error}\n${await fleet.diagnose(db)}`);
    });
    expect(most).toBe(1);
    // A worker allowed more than the whole fleet is brought down to the cap, and says so.
    expect(workers[0]?.output()).toContain(
      '--concurrency 2 is above --global-concurrency 1: this worker runs 1 at once',
    );
    const executors = await fleet.query<{ executor_id: string }>(
      db,
      'SELECT executor_id FROM relais_fleet.runs',
    );
    expect(executors).toHaveLength(3);
    for (const worker of workers) worker.signal('SIGTERM');
    await Promise.all(workers.map((w) => w.done));
  }, 300_000);

  it("a model account's rate holds across workers: calls beyond it wait for the window to move, whatever each worker was started with", async () => {
    const db = fleet.postgres.database('rate');
    const three = [0, 1, 2].map(() => fleet.track(fleetProject()));
    // A 3-second window instead of a minute, so the test shows the limit without waiting a minute.
    const env = fleet.workerEnv(three[0] as FleetProject, { RELAIS_FLEET_RATE_WINDOW_MS: '3000' });
    const rate = await fleet.cli(['fleet', 'rate', 'team-a', '--per-minute', '2', '--db', db], env);
    expect(rate.code, rate.stderr).toBe(0);
    const workers = [
      fleet.startWorker(db, 'rate-a', env, 2, ['--account', 'claude=team-a']),
      fleet.startWorker(db, 'rate-b', env, 2, ['--account', 'claude=team-a']),
    ];
    await until(db, 'SELECT executor_id FROM relais_fleet.workers', (rows) => rows.length === 2);
    const runIds = [];
    for (const project of three) runIds.push(await fleet.submit(db, [project.remote, '--yes'], env));
    for (const runId of runIds) expect(await fleet.result(db, runId)).toMatchObject({ status: 'completed' });
    const slots = (
      await fleet.query<{ ms: number }>(
        db,
        "SELECT (EXTRACT(EPOCH FROM at) * 1000)::float8 AS ms FROM relais_fleet.account_calls WHERE account = 'team-a' ORDER BY at",
      )
    ).map((r) => r.ms);
    expect(slots).toHaveLength(9);
    // Any three consecutive calls span more than the window: never three in one window.
    for (let i = 2; i < slots.length; i++)
      expect((slots[i] as number) - (slots[i - 2] as number)).toBeGreaterThanOrEqual(3000);
    const ledger = await fleet.query<{ account: string; n: number }>(
      db,
      'SELECT account, COUNT(*)::int AS n FROM relais_fleet.ledger GROUP BY account',
    );
    expect(ledger).toEqual([{ account: 'team-a', n: 9 }]);
    const byWorker = await fleet.query<{ executor_id: string }>(
      db,
      'SELECT DISTINCT executor_id FROM relais_fleet.runs',
    );
    expect(byWorker.length, 'both workers ran calls on the one account').toBe(2);
    const status = JSON.parse((await fleet.cli(['fleet', 'status', '--json', '--db', db], env)).stdout);
    expect(status.accounts).toEqual([expect.objectContaining({ name: 'team-a', calls_per_minute: 2 })]);
    for (const worker of workers) worker.signal('SIGTERM');
    await Promise.all(workers.map((w) => w.done));
  }, 300_000);
});
