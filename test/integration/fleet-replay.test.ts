import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FleetProject,
  fleetProject,
  prCreates,
  remoteBranches,
  remoteLog,
  until,
} from '../support/fleet.js';
import { type Child, FleetHarness } from '../support/fleet-harness.js';
import { qaStep, specStep, TASKS_MD } from '../support/workflow.js';

// Issue 20: every finished agent call of a fleet run is durable. A worker SIGKILLed in the middle
// of a phase, after two of its three agent calls finished: the phase runs again (on a survivor, or
// on the same executor id restarted) and replays those two from the database (their change to the
// worktree and their answer) instead of calling the model and paying again. A REAL PostgreSQL
// and real worker processes of the built CLI (`npm run build` first), the scripted agent.

const fleet = new FleetHarness();

beforeAll(() => fleet.setUp());
afterAll(() => fleet.tearDown());

const COSTS = { spec: 0.1, dev: 0.2, qa: 0.05 };
const COMPLETED = TASKS_MD.replaceAll('- **Status**: pending', '- **Status**: completed');
const GREET = { write: 'src/a.ts', content: 'export const greet = (n: string) => "Hello, " + n;\n' };
const BYE = { write: 'src/b.ts', content: 'export const bye = (n: string) => "Bye, " + n;\n' };
/** What the runner tells the third call after the second claimed done with tasks left open. */
const RETRY_NOTE = 'You ended with EXIT_SIGNAL: true, but the runner checked and';

/**
 * One IMPLEMENTATION phase of three dev calls (single engine): the first two claim done with tasks
 * still open (the runner's check sends each back), the third finishes. The third is held until
 * its process group is killed with the worker; a fourth answer is there for the call that takes
 * its place after the kill. The first two are the only ones that write src/a.ts and src/b.ts: a
 * completed run holds them only if their changes were replayed.
 */
function replayProject(): FleetProject {
  const project = fleet.track(fleetProject());
  const hold = {
    exec: [
      process.execPath,
      '-e',
      // Held until its process group is killed (or the test's folder is gone).
      `const fs=require('fs');const d=${JSON.stringify(project.base)};const t=new Int32Array(new SharedArrayBuffer(4));while(fs.existsSync(d))Atomics.wait(t,0,0,100);`,
    ],
  };
  const finish = { write: 'specs/TASKS.md', content: COMPLETED };
  const done = 'Both tasks are implemented and tested.\nEXIT_SIGNAL: true';
  project.scenario({
    spec: [{ ...specStep(), cost: COSTS.spec }],
    dev: [
      { actions: [GREET], result: 'Task 1 is implemented.\nEXIT_SIGNAL: true', cost: COSTS.dev },
      { actions: [BYE], result: 'Task 2 is implemented.\nEXIT_SIGNAL: true', cost: COSTS.dev },
      { actions: [hold, finish], result: done, cost: COSTS.dev },
      { actions: [finish], result: done, cost: COSTS.dev },
    ],
    qa: [{ ...qaStep(), cost: COSTS.qa }],
  });
  return project;
}

/** Submits, waits until the third dev call has started (the first two kept), kills worker and agent. */
async function killAfterSecondCall(db: string, project: FleetProject, worker: Child): Promise<string> {
  const runId = await fleet.submit(db, [project.remote, '--yes'], fleet.workerEnv(project));
  const devCalls = () => project.calls().filter((c) => c.role === 'dev').length;
  await until(db, 'SELECT 1', () => devCalls() >= 3, 240_000).catch(async (error) => {
    throw new Error(`${error}\n${await fleet.diagnose(db)}`);
  });
  const kept = await fleet.query<{ role: string }>(
    db,
    'SELECT role FROM relais_fleet.agent_calls WHERE run_id = $1 AND role = $2',
    [runId, 'dev'],
  );
  expect(kept, 'the two finished dev calls are kept before the third starts').toHaveLength(2);
  worker.signal('SIGKILL');
  expect((await worker.done).signal).toBe('SIGKILL');
  // The machine is gone with its worker: so is the agent it had started (its own process group).
  const agent = Number(readFileSync(`${project.scenarioPath}.dev.pid`, 'utf8'));
  try {
    process.kill(-agent, 'SIGKILL');
  } catch {
    // Already gone.
  }
  return runId;
}

/** The run's events saying a call was replayed from its checkpoint (what `ralphy attach` shows). */
async function replayed(db: string, runId: string): Promise<number> {
  const rows = await fleet.query<{ n: number }>(
    db,
    "SELECT count(*)::int AS n FROM relais_fleet.events WHERE run_id = $1 AND event->>'message' LIKE '%replayed from its checkpoint%'",
    [runId],
  );
  return rows[0]?.n ?? 0;
}

interface Entry {
  role: string;
  spent: number;
  reserved: number;
  settled: boolean;
  abandoned: boolean;
}

/** Calls 1 and 2 once each, commits, push and PR once, the ledger counting each call once. */
async function expectCompletedOnce(db: string, project: FleetProject, runId: string): Promise<void> {
  expect(await fleet.result(db, runId, 280_000)).toMatchObject({ status: 'completed', state: 'COMPLETED' });
  const dev = project.calls().filter((c) => c.role === 'dev');
  // Calls 1 and 2 ran once; the cut-off call 3 ran again (as the scenario's fourth answer), told
  // why the second was sent back: the replayed calls came before it in the phase.
  expect(dev).toHaveLength(4);
  expect(dev[3]?.prompt).toContain(RETRY_NOTE);
  expect(project.calls().filter((c) => c.role === 'spec')).toHaveLength(1);
  expect(project.calls().filter((c) => c.role === 'qa')).toHaveLength(1);

  const branches = remoteBranches(project);
  expect(branches, 'one feature branch').toHaveLength(1);
  const branch = branches[0] as string;
  expect(remoteLog(project, branch)).toEqual([
    'ralphy: specification and tasks for "Greeting service"',
    'ralphy: implementation of "Greeting service" (dev-agent)',
    'ralphy: QA report for "Greeting service"',
  ]);
  // The replayed changes are in the judged commit: only calls 1 and 2 ever wrote these files.
  const show = (path: string) => project.git('--git-dir', project.remote, 'show', `${branch}:${path}`);
  expect(show('src/a.ts')).toBe(GREET.content);
  expect(show('src/b.ts')).toBe(BYE.content);
  expect(prCreates(project), 'one pull request').toHaveLength(1);

  const entries = await fleet.query<Entry>(
    db,
    'SELECT role, spent_usd::float8 AS spent, reserved_usd::float8 AS reserved, settled, abandoned FROM relais_fleet.ledger WHERE run_id = $1',
    [runId],
  );
  expect(entries, 'one ledger entry per call the model saw').toHaveLength(project.calls().length);
  const devEntries = entries.filter((e) => e.role === 'dev');
  expect(devEntries.filter((e) => !e.abandoned).map((e) => e.spent)).toEqual([
    COSTS.dev,
    COSTS.dev,
    COSTS.dev,
  ]);
  expect(
    devEntries.filter((e) => e.abandoned),
    'the cut-off call, at its reservation',
  ).toHaveLength(1);
  for (const entry of entries) expect(entry.settled).toBe(true);
  const [budget] = await fleet.query<{ spent: number; reserved: number }>(
    db,
    'SELECT spent_usd::float8 AS spent, reserved_usd::float8 AS reserved FROM relais_fleet.budget',
  );
  expect(budget?.spent).toBeCloseTo(
    entries.reduce((sum, e) => sum + e.spent, 0),
    9,
  );
  expect(budget?.reserved).toBeCloseTo(0, 9);
}

describe('fleet: finished agent calls survive a kill', () => {
  it('a survivor takes over after a SIGKILL between calls 2 and 3 of a phase and replays calls 1 and 2', async () => {
    const db = fleet.postgres.database('replay_takeover');
    const project = replayProject();
    const env = fleet.workerEnv(project);
    const a = fleet.startWorker(db, 'replay-a', env, 1);
    await until(db, 'SELECT executor_id FROM relais_fleet.workers', (rows) => rows.length === 1);
    const runId = await killAfterSecondCall(db, project, a);
    const b = fleet.startWorker(db, 'replay-b', env, 1);
    await expectCompletedOnce(db, project, runId);
    expect(await replayed(db, runId), 'calls 1 and 2 replayed').toBe(2);
    const [dead] = await fleet.query<{ taken_over_by: string | null }>(
      db,
      "SELECT taken_over_by FROM relais_fleet.workers WHERE executor_id = 'replay-a'",
    );
    expect(dead?.taken_over_by).toBe('replay-b');
    b.signal('SIGTERM');
    expect((await b.done).code).toBe(0);
  }, 600_000);

  it('a worker restarted under the same executor id recovers the run at launch and completes it once', async () => {
    const db = fleet.postgres.database('replay_restart');
    const project = replayProject();
    const env = fleet.workerEnv(project);
    const first = fleet.startWorker(db, 'replay-x', env, 1);
    await until(db, 'SELECT executor_id FROM relais_fleet.workers', (rows) => rows.length === 1);
    const runId = await killAfterSecondCall(db, project, first);
    // No other worker: only DBOS's recovery at launch, under the same executor id, can go on.
    const again = fleet.startWorker(db, 'replay-x', env, 1);
    await expectCompletedOnce(db, project, runId);
    expect(await replayed(db, runId), 'calls 1 and 2 replayed').toBe(2);
    const workers = await fleet.query<{
      executor_id: string;
      generation: number;
      taken_over_by: string | null;
    }>(db, 'SELECT executor_id, generation::int AS generation, taken_over_by FROM relais_fleet.workers');
    expect(workers).toHaveLength(1);
    expect(workers[0]?.taken_over_by).toBeNull();
    again.signal('SIGTERM');
    expect((await again.done).code).toBe(0);
  }, 600_000);
});
