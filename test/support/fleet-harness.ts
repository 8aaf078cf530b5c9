import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DBOSClient } from '@dbos-inc/dbos-sdk';
import pg from 'pg';
import { type FleetProject, relais, until } from './fleet.js';
import { startPostgres, type TestPostgres } from './postgres.js';
import type { RunningCli } from './project.js';

/**
 * What every fleet test file shares (issue 20): a REAL PostgreSQL started for the file, worker
 * processes of the built CLI (`npm run build` first), submits, and the waits on the database.
 * Call `setUp()` in beforeAll and `tearDown()` in afterAll.
 */

export type Child = RunningCli & { output(): string };

export interface RunResult {
  status: string;
  state: string | null;
  detail: string | null;
}

export class FleetHarness {
  postgres!: TestPostgres;
  scratch!: string;
  readonly projects: FleetProject[] = [];
  readonly children: Child[] = [];

  async setUp(): Promise<void> {
    this.postgres = await startPostgres();
    this.scratch = mkdtempSync(join(tmpdir(), 'relais-fleet-'));
  }

  tearDown(): void {
    for (const child of this.children) child.signal('SIGKILL');
    for (const project of this.projects) project.dispose();
    this.postgres?.stop();
    if (this.scratch) rmSync(this.scratch, { recursive: true, force: true });
  }

  track(project: FleetProject): FleetProject {
    this.projects.push(project);
    return project;
  }

  /** The environment workers and commands share (a project's, or this process's without one). */
  workerEnv(project: FleetProject | null, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    return {
      ...(project ? project.env : { ...process.env, HOME: this.scratch }),
      IS_SANDBOX: '1',
      RELAIS_FLEET_POLL_MS: '100',
      RELAIS_FLEET_COMMENT_POLL_MS: '300',
      // Short enough for a quick takeover, long enough that a loaded machine's late heartbeat is
      // not taken for a death.
      RELAIS_FLEET_HEARTBEAT_MS: '500',
      RELAIS_FLEET_DEAD_AFTER_MS: '8000',
      ...extra,
    };
  }

  startWorker(db: string, id: string, env: NodeJS.ProcessEnv, concurrency = 3, extra: string[] = []): Child {
    const child = relais(
      [
        'worker',
        '--db',
        db,
        '--id',
        id,
        '--concurrency',
        String(concurrency),
        '--dir',
        join(this.scratch, 'work'),
        ...extra,
      ],
      env,
      this.scratch,
    );
    this.children.push(child);
    return child;
  }

  /** `relais <args>` in a child process, as a user types it; resolves when it ends. */
  cli(args: string[], env: NodeJS.ProcessEnv, cwd = this.scratch) {
    return relais(args, env, cwd).done;
  }

  /** Submits and returns the run id (the submit must succeed). */
  async submit(db: string, args: string[], env: NodeJS.ProcessEnv, cwd = this.scratch): Promise<string> {
    const submitted = await this.cli(['submit', ...args, '--db', db, '--json'], env, cwd);
    if (submitted.code !== 0) throw new Error(`submit failed (${submitted.code}): ${submitted.stderr}`);
    return JSON.parse(submitted.stdout).run_id as string;
  }

  /**
   * Waits until the run waits at a gate (of `gate`, when given; another wait than `notWait`, when
   * given: an answered wait stays in the row until the worker takes the answer) and returns it.
   */
  async gateOf(
    db: string,
    runId: string,
    gate?: string,
    notWait?: string,
  ): Promise<{ gate: string; id: string; title: string; lines: string[]; answer: string }> {
    const waiting = (json: string | null | undefined) => {
      if (!json) return false;
      const wait = JSON.parse(json);
      return (!gate || wait.gate === gate) && wait.id !== notWait;
    };
    const rows = await until<{ gate_json: string | null }>(
      db,
      `SELECT gate_json FROM relais_fleet.runs WHERE run_id = '${runId}'`,
      (r) => waiting(r[0]?.gate_json),
      180_000,
    ).catch(async (error) => {
      throw new Error(`${error}\n${await this.diagnose(db)}`);
    });
    return JSON.parse(rows[0]?.gate_json as string);
  }

  /** The run's end, as its DBOS workflow returned it. */
  async result(db: string, runId: string, timeoutMs = 240_000): Promise<RunResult> {
    const client = await DBOSClient.create({ systemDatabaseUrl: db, applicationName: 'relais-fleet' });
    try {
      const ended = await Promise.race([
        client.retrieveWorkflow<RunResult>(runId).getResult(),
        new Promise<null>((r) => setTimeout(() => r(null), timeoutMs).unref()),
      ]);
      if (!ended) throw new Error(`run ${runId} did not end in ${timeoutMs} ms\n${await this.diagnose(db)}`);
      return ended;
    } finally {
      await client.destroy();
    }
  }

  /** What the workers printed and the runs' rows: shown when a wait times out. */
  async diagnose(db: string): Promise<string> {
    const client = new pg.Client({ connectionString: db });
    await client.connect();
    const runs = await client
      .query(
        'SELECT run_id, state, status, detail, waiting_gate, gate_wait, executor_id FROM relais_fleet.runs',
      )
      .then((r) => JSON.stringify(r.rows, null, 1))
      .catch((e) => String(e));
    const wf = await client
      .query('SELECT workflow_uuid, status, executor_id, queue_name, error FROM dbos.workflow_status')
      .then((r) => JSON.stringify(r.rows, null, 1))
      .catch((e) => String(e));
    await client.end();
    return `${runs}\n${wf}\n${this.children.map((c) => c.output()).join('\n---\n')}`;
  }

  async query<T>(db: string, sql: string, params: unknown[] = []): Promise<T[]> {
    const client = new pg.Client({ connectionString: db });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows as T[];
    } finally {
      await client.end();
    }
  }
}
