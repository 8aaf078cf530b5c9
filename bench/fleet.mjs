// npm run bench: the fleet (issue 20) on a real PostgreSQL started here. Throughput of N runs
// with 1 worker vs 2 workers, and what the database adds: the wall time of one run through a
// worker against the same run with `ralphy start --yes` on one machine (ratio). The agents are
// the scripted fake-claude, so the numbers are the runner's and the database's own cost.
// Needs PostgreSQL's binaries (initdb, pg_ctl, createdb) and a built dist/.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist/cli/main.cjs');
const FAKE = join(ROOT, 'test/support/fake-claude.mjs');
const RUNS = Number(process.env.BENCH_FLEET_RUNS ?? 4);
const base = mkdtempSync(join(tmpdir(), 'relais-bench-fleet-'));
const env = {
  ...process.env,
  CI: 'true',
  IS_SANDBOX: '1',
  HOME: join(base, 'home'),
  GIT_AUTHOR_NAME: 'B',
  GIT_AUTHOR_EMAIL: 'b@b',
  GIT_COMMITTER_NAME: 'B',
  GIT_COMMITTER_EMAIL: 'b@b',
  RELAIS_FLEET_POLL_MS: '100',
  RELAIS_FLEET_HEARTBEAT_MS: '500',
};
mkdirSync(env.HOME, { recursive: true });

const TASKS = [
  '# Tasks',
  '',
  '## Task 1: Greet by name',
  '- **Status**: pending',
  '- **Description**: greet(name).',
  '- **Files**: src/a.ts',
  '',
  '## Task 2: Say goodbye',
  '- **Status**: pending',
  '- **Description**: bye(name).',
  '- **Files**: src/b.ts',
  '',
].join('\n');
const SCENARIO = {
  spec: [
    {
      actions: [
        { write: 'specs/SPEC.md', content: '# Spec\n\nTwo functions.\n' },
        { write: 'specs/TASKS.md', content: TASKS },
      ],
      result: 'Written.\n\nEXIT_SIGNAL: true',
    },
  ],
  dev: [
    {
      actions: [
        { write: 'src/a.ts', content: 'export const greet = 1;\n' },
        { write: 'src/b.ts', content: 'export const bye = 1;\n' },
        { write: 'specs/TASKS.md', content: TASKS.replaceAll('pending', 'completed') },
      ],
      result: 'Done.\nEXIT_SIGNAL: true',
    },
  ],
  qa: [
    {
      actions: [{ write: 'specs/QA_REPORT.md', content: '# QA report\n\n## Summary\nFine.\n' }],
      result: 'Report written.\nEXIT_SIGNAL: true',
    },
  ],
};

const git = (cwd, ...args) => execFileSync('git', args, { cwd, env, encoding: 'utf8' });

/** A repository like the fleet tests': single engine, its own scripted agent, a bare remote, a gh that records. */
function repository(name) {
  const dir = join(base, name);
  const root = join(dir, 'repo');
  mkdirSync(join(root, 'src'), { recursive: true });
  mkdirSync(join(dir, 'bin'), { recursive: true });
  writeFileSync(join(root, 'PRD.md'), '# Greeting service\n\n## Objective\nGreet people.\n');
  writeFileSync(join(root, 'src/a.ts'), 'export const a = 1;\n');
  writeFileSync(join(root, 'src/b.ts'), 'export const b = 1;\n');
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', 'initial');
  execFileSync(process.execPath, [CLI, 'init'], { cwd: root, env, stdio: 'ignore' });
  const scenario = join(dir, 'scenario.json');
  writeFileSync(scenario, JSON.stringify(SCENARIO));
  const agent = join(dir, 'bin/agent');
  writeFileSync(
    agent,
    `#!/bin/sh\nRELAIS_FAKE_SCENARIO=${JSON.stringify(scenario)} exec ${JSON.stringify(process.execPath)} ${JSON.stringify(FAKE)} "$@"\n`,
  );
  const gh = join(dir, 'bin/gh');
  writeFileSync(gh, '#!/bin/sh\n[ "$2" = create ] && echo https://github.com/example/x/pull/1\nexit 0\n');
  chmodSync(agent, 0o755);
  chmodSync(gh, 0o755);
  const configPath = join(root, 'relais.config.json');
  const config = JSON.parse(readFileSync(configPath, 'utf8'));
  config.claude_code_cli.command = agent;
  config.pr.gh_command = gh;
  config.workflow.implementation_engine = 'single';
  config.planner = { ...config.planner, enabled: false };
  config.verification.templates = [{ id: 'ok', cmd: 'node', args: ['-e', 'process.exit(0)'] }];
  config.scope.default_allowed_globs = ['src/**', 'specs/**'];
  // The runner's and the database's cost, not the OS sandbox's (bench/sandbox-cost.mjs measures that).
  config.sandbox = 'off';
  writeFileSync(configPath, `${JSON.stringify(config, null, 2)}\n`);
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', 'relais config');
  const remote = join(dir, 'remote.git');
  git(dir, 'init', '-q', '--bare', remote);
  git(root, 'remote', 'add', 'origin', remote);
  git(root, 'push', '-q', 'origin', 'main');
  return { root, remote };
}

function freePort() {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function pgBin(name) {
  for (const v of ['17', '16', '15'])
    if (existsSync(`/usr/lib/postgresql/${v}/bin/${name}`)) return `/usr/lib/postgresql/${v}/bin/${name}`;
  return name;
}

const asRoot = process.getuid?.() === 0;
const asPg = (argv) => (asRoot ? ['runuser', '-u', 'postgres', '--', ...argv] : argv);
function sh(argv) {
  const [cmd, ...args] = asPg(argv);
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${argv.join(' ')}: ${r.stderr}`);
}

if (spawnSync(pgBin('initdb'), ['--version']).status !== 0) {
  console.log('fleet: skipped (no PostgreSQL binaries: apt-get install postgresql)');
  rmSync(base, { recursive: true, force: true });
  process.exit(0);
}
// Beside the bench's folder, not in it: as root the server runs as `postgres`, which cannot enter
// a folder mkdtemp made private to root.
const pgDir = mkdtempSync(join(tmpdir(), 'relais-bench-pg-'));
if (asRoot) {
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
  chownSync(pgDir, uid, gid);
}
const port = await freePort();
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
// Every worker this bench started, ended on the way out whatever happened.
const spawned = [];

async function fleetRound(dbName, workers, runs, concurrency) {
  sh([pgBin('createdb'), '-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', dbName]);
  const db = `postgresql://postgres@127.0.0.1:${port}/${dbName}`;
  const repos = Array.from({ length: runs }, (_, i) => repository(`${dbName}-${i}`));
  const procs = Array.from({ length: workers }, (_, i) =>
    spawn(
      process.execPath,
      [
        CLI,
        'worker',
        '--db',
        db,
        '--id',
        `${dbName}-w${i}`,
        '--concurrency',
        String(concurrency),
        '--dir',
        join(base, 'work'),
      ],
      { env, stdio: 'ignore' },
    ),
  );
  spawned.push(...procs);
  const { DBOSClient } = await import('@dbos-inc/dbos-sdk');
  await workersUp(db, workers);
  const start = performance.now();
  const ids = repos.map(
    (r) =>
      JSON.parse(
        execFileSync(process.execPath, [CLI, 'submit', r.remote, '--db', db, '--yes', '--json'], {
          env,
          encoding: 'utf8',
        }),
      ).run_id,
  );
  const client = await DBOSClient.create({ systemDatabaseUrl: db, applicationName: 'relais-fleet' });
  const ends = await Promise.all(ids.map((id) => client.retrieveWorkflow(id).getResult()));
  const ms = performance.now() - start;
  await client.destroy();
  for (const p of procs) p.kill('SIGTERM');
  const bad = ends.filter((e) => e.status !== 'completed');
  if (bad.length > 0) throw new Error(`fleet runs did not complete: ${JSON.stringify(bad)}`);
  return ms;
}

/** The clock starts once every worker is registered (DBOS launch is not part of a run). */
async function workersUp(db, n) {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: db });
  await client.connect();
  for (;;) {
    const count = await client
      .query('SELECT COUNT(*)::int AS n FROM relais_fleet.workers')
      .then((r) => r.rows[0].n)
      .catch(() => 0);
    if (count >= n) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 1000)); // the queue is registered just after
  await client.end();
}

function localRun(i) {
  const { root } = repository(`local-${i}`);
  const start = performance.now();
  const r = spawnSync(process.execPath, [CLI, 'start', root, '--yes'], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ralphy start exited ${r.status}: ${r.stdout}${r.stderr}`);
  return performance.now() - start;
}

try {
  sh([pgBin('initdb'), '-D', join(pgDir, 'data'), '-U', 'postgres', '--auth=trust', '--no-sync']);
  sh([
    pgBin('pg_ctl'),
    '-D',
    join(pgDir, 'data'),
    '-w',
    '-l',
    join(pgDir, 'log'),
    '-o',
    `-p ${port} -k ${pgDir} -c listen_addresses=127.0.0.1 -c fsync=off`,
    'start',
  ]);
  const local = median(Array.from({ length: 3 }, (_, i) => localRun(i)));
  const solo = await fleetRound('solo', 1, 1, 1);
  const single = await fleetRound('one', 1, RUNS, 2);
  const double = await fleetRound('two', 2, RUNS, 2);
  console.log(
    `fleet, ${RUNS} runs (4 phases each: spec, implementation, QA, PR), concurrency 2 per worker, sandbox off`,
  );
  console.log(
    `  local ralphy start --yes, one run   ${(local / 1000).toFixed(2).padStart(7)} s (median of 3)`,
  );
  console.log(
    `  1 worker, ${RUNS} runs                  ${(single / 1000).toFixed(2).padStart(7)} s  ${((RUNS / single) * 60000).toFixed(1)} runs/min`,
  );
  console.log(
    `  2 workers, ${RUNS} runs                 ${(double / 1000).toFixed(2).padStart(7)} s  ${((RUNS / double) * 60000).toFixed(1)} runs/min  (${(single / double).toFixed(2)}x)`,
  );
  console.log(
    `  one run through 1 worker vs local   ${(solo / 1000).toFixed(2).padStart(7)} s  ${(solo / local).toFixed(2)}x (${((solo - local) / 4 / 1000).toFixed(2)} s added per step)`,
  );
} finally {
  for (const p of spawned) p.kill('SIGKILL');
  spawnSync(
    asPg([pgBin('pg_ctl'), '-D', join(pgDir, 'data'), '-m', 'immediate', 'stop'])[0],
    asPg([pgBin('pg_ctl'), '-D', join(pgDir, 'data'), '-m', 'immediate', 'stop']).slice(1),
  );
  rmSync(base, { recursive: true, force: true });
  rmSync(pgDir, { recursive: true, force: true });
}
