// npm run bench: one `relais run` tick with the REAL Claude Code binary (node_modules/.bin/claude)
// against a scripted model on 127.0.0.1, against the same two agent calls made bare: the same
// argv, stdin and cwd, recorded from a tick, replayed straight to claude (issue 17's goal: the tick
// <= 1.2x the bare calls; what Relais adds around the agents, not the agents themselves).
//
// The tick: the orchestrator answers a task, the builder reads a file, edits it with Claude Code's
// own Edit tool and answers; no verification command (that would be the project's time, not the
// runner's). What Relais adds is everything else: start-up, preflight, the sandbox around each
// agent, the judge, the commit, the reports. Ticks and bare calls alternate, so both see the same
// load; wall-clock medians (the agents wait on the model) with CPU beside them. Beside them, the
// same calls inside the bwrap the tick gave them, with no runner around, and `node -e 0`: the
// least any runner in that sandbox adds, so the line says what 1.2x leaves for the runner's own work.
//
// BENCH_BEFORE=<absolute path to another build's dist/cli/main.cjs (or main.js, before it)> runs that build's tick too, in
// the same rounds, so before/after comes from one run under one load.
import { spawn } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist/cli/main.cjs');
const BEFORE = process.env.BENCH_BEFORE || null;
const CLAUDE = join(ROOT, 'node_modules/.bin/claude');
const { startScriptedModel } = await import('../dist/demo/scripted-model-server.js');
const { relaisScript } = await import('../dist/demo/relais-script.js');

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const FILES = Number(process.env.BENCH_CLAUDE_FILES ?? 1000);
const GOAL = 1.2;
const baseEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Bench',
  GIT_AUTHOR_EMAIL: 'b@b',
  GIT_COMMITTER_NAME: 'Bench',
  GIT_COMMITTER_EMAIL: 'b@b',
  CI: 'true',
  // The real binary against the scripted model: no key, no network (test/support/real-claude.ts).
  ANTHROPIC_API_KEY: 'sk-test-offline',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  IS_SANDBOX: '1',
};

/** Runs a command; resolves with wall ms, CPU ms of everything it started (sh's `times`), stdout. */
function timed(cwd, argv, { env = baseEnv, stdin = '' } = {}) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn('/bin/sh', ['-c', '"$@" <&3 3<&-\ntimes >&2', 'sh', ...argv], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    child.stdio[3].end(stdin);
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('close', (code) => {
      const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
      const t = err
        .trim()
        .split('\n')
        .at(-1)
        ?.match(/(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s/);
      if (code !== 0 || !t) return reject(new Error(`${argv.join(' ')} exited ${code}: ${err.slice(-1500)}`));
      const cpuMs = (Number(t[1]) * 60 + Number(t[2]) + Number(t[3]) * 60 + Number(t[4])) * 1000;
      resolve({ wallMs, cpuMs, stdout: out });
    });
  });
}

const git = (cwd, ...args) => timed(cwd, ['git', ...args]);

const TASK = JSON.stringify({
  task_id: 'C1',
  milestone_id: 'BENCH',
  task_kind: 'execute',
  intent: 'bump the counter',
  scope: {
    allowed_globs: ['src/**'],
    forbidden_globs: [],
    allow_new_files: false,
    allow_lockfile_changes: false,
  },
  diff_limits: { max_files_touched: 2, max_lines_changed: 10 },
  verification: { fast: [], slow: [] },
  builder: { mode: 'claude_code', max_turns: 6, instructions: 'Bump the counter in src/counter.js by one.' },
});

/** The model for one tick: the task, then Read, Edit (n -> n+1) and the builder's answer. */
function modelFor(repo) {
  const file = join(repo, 'src/counter.js');
  const n = Number(readFileSync(file, 'utf8').match(/= (\d+);/)?.[1]);
  const answer = JSON.stringify({
    summary: 'bumped',
    files_intended: ['src/counter.js'],
    commands_ran: [],
    notes: [],
  });
  return startScriptedModel(
    relaisScript({
      orchestrator: () => TASK,
      builder: () => [
        { toolUses: [{ name: 'Read', input: { file_path: file } }] },
        {
          toolUses: [
            { name: 'Edit', input: { file_path: file, old_string: `= ${n};`, new_string: `= ${n + 1};` } },
          ],
        },
        { text: answer },
      ],
    }),
  );
}

async function makeRepo(base) {
  const repo = join(base, 'repo');
  for (let i = 0; i < FILES; i++) {
    const dir = join(repo, 'lib', `d${i % 50}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `f${i}.js`), `export const v${i} = ${i};\n`);
  }
  mkdirSync(join(repo, 'src'), { recursive: true });
  writeFileSync(join(repo, 'src/counter.js'), 'export const counter = 0;\n');
  await git(repo, 'init', '-q', '-b', 'main');
  await git(repo, 'add', '-A');
  await git(repo, 'commit', '-qm', 'generated');
  await timed(repo, [process.execPath, CLI, 'init']);
  return repo;
}

async function configure(repo, command, writableOutside = []) {
  const path = join(repo, 'relais.config.json');
  const config = JSON.parse(readFileSync(path, 'utf8'));
  config.claude_code_cli.command = command;
  config.verification.templates = [];
  config.sandbox = { mode: 'bwrap', writable_outside: writableOutside };
  writeFileSync(path, JSON.stringify(config, null, 2));
  await git(repo, 'add', 'relais.config.json');
  await git(repo, 'commit', '-qm', 'config');
}

/**
 * A claude that notes its argv, stdin and cwd, then runs the real one: how a tick calls it. It
 * also keeps the sandbox's own argv: inside bwrap's PID namespace, process 1 is bwrap's init, a
 * fork of bwrap with its command line.
 */
function recorder(dir) {
  const script = join(dir, 'claude-recorder.sh');
  writeFileSync(
    script,
    `#!/bin/sh
n=$(ls "${dir}"/call-*.stdin 2>/dev/null | wc -l)
printf '%s\\0' "$@" > "${dir}/call-$n.argv"
pwd > "${dir}/call-$n.cwd"
cp /proc/1/cmdline "${dir}/call-$n.bwrap"
cat > "${dir}/call-$n.stdin"
exec "${CLAUDE}" "$@" < "${dir}/call-$n.stdin"
`,
  );
  chmodSync(script, 0o755);
  return script;
}

async function tick(repo, cli = CLI) {
  const model = await modelFor(repo);
  try {
    const run = await timed(repo, [process.execPath, cli, 'run', '--json'], {
      env: { ...baseEnv, ANTHROPIC_BASE_URL: model.url },
    });
    const events = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const finished = events.at(-1);
    if (finished.code !== 'SUCCESS') throw new Error(`bench tick ended ${finished.code}: ${finished.detail}`);
    // The agents' own time as the runner measured it, the sandbox included: from the call (the
    // prompt written) to the exit. An orchestrator prestarted during preflight loads before its
    // call, so "outside the agents" counts what the tick waited for, not all the runner did.
    const agentsMs = events
      .filter((e) => e.type === 'agent.finished')
      .reduce((sum, e) => sum + e.duration_ms, 0);
    return { ...run, agentsMs };
  } finally {
    await model.close();
  }
}

/** The recorded calls, one after the other as the tick makes them, on the tree the tick started from. */
async function bare(repo, calls) {
  const model = await modelFor(repo);
  try {
    let wallMs = 0;
    let cpuMs = 0;
    for (const call of calls) {
      const r = await timed(call.cwd, [CLAUDE, ...call.argv], {
        env: { ...baseEnv, ANTHROPIC_BASE_URL: model.url },
        stdin: call.stdin,
      });
      wallMs += r.wallMs;
      cpuMs += r.cpuMs;
    }
    return { wallMs, cpuMs };
  } finally {
    await model.close();
    // The builder's edit, undone: the next tick starts from a clean tree.
    await git(repo, 'checkout', '-q', '--', 'src/counter.js');
  }
}

/**
 * The same calls inside the sandbox the tick gave them (bwrap with its recorded argv, the
 * scratch folders it binds made again, with only `~/.claude.json` copied into their HOME), with
 * no runner around them: what the sandbox itself costs, apart from what the runner does.
 */
async function sandboxedBare(repo, calls) {
  const model = await modelFor(repo);
  const scratches = [];
  try {
    let wallMs = 0;
    for (const call of calls) {
      const { argv, scratch } = rebuildSandbox(call);
      scratches.push(scratch);
      const home = join(scratch, 'home');
      const tmp = join(scratch, 'tmp');
      const r = await timed(call.cwd, argv, {
        env: { ...baseEnv, ANTHROPIC_BASE_URL: model.url, HOME: home, TMPDIR: tmp, TMP: tmp, TEMP: tmp },
        stdin: call.stdin,
      });
      wallMs += r.wallMs;
    }
    return { wallMs };
  } finally {
    await model.close();
    for (const scratch of scratches) rmSync(scratch, { recursive: true, force: true });
    await git(repo, 'checkout', '-q', '--', 'src/counter.js');
  }
}

/** A recorded bwrap argv with the real claude after `--`, and the folders it binds made again. */
function rebuildSandbox(call) {
  const separator = call.bwrap.indexOf('--');
  const options = call.bwrap.slice(0, separator);
  // The scratch folder itself (its HOME and temp folder inside): bound first, at its own path.
  const scratch = options.find((a) => /\/relais-sandbox-[^/]+$/.test(a));
  if (separator < 0 || !scratch)
    throw new Error(`not a sandbox's argv: ${call.bwrap.join(' ').slice(0, 500)}`);
  mkdirSync(join(scratch, 'home'), { recursive: true });
  mkdirSync(join(scratch, 'tmp'), { recursive: true });
  for (let i = 1; i < options.length; i++)
    if (['--bind', '--ro-bind'].includes(options[i]) && options[i + 1].startsWith(scratch))
      mkdirSync(options[i + 1], { recursive: true });
  // The login the runner copies in (sandbox/scratch.ts), when there is one.
  const login = join(process.env.HOME ?? '', '.claude.json');
  if (existsSync(login)) cpSync(login, join(scratch, 'home', '.claude.json'));
  return { argv: [...options, '--', CLAUDE, ...call.argv], scratch };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = mkdtempSync(join(tmpdir(), 'relais-bench-claude-'));
try {
  const repo = await makeRepo(base);
  const rec = join(base, 'recorded');
  mkdirSync(rec);
  // One recorded tick (its folder writable in the sandbox), then the real binary directly.
  await configure(repo, recorder(rec), [rec]);
  await tick(repo);
  const calls = [0, 1].map((n) => ({
    argv: readFileSync(join(rec, `call-${n}.argv`), 'utf8')
      .split('\0')
      .slice(0, -1),
    cwd: readFileSync(join(rec, `call-${n}.cwd`), 'utf8').trim(),
    stdin: readFileSync(join(rec, `call-${n}.stdin`), 'utf8'),
    bwrap: readFileSync(join(rec, `call-${n}.bwrap`), 'utf8')
      .split('\0')
      .slice(0, -1),
  }));
  await configure(repo, CLAUDE);
  await tick(repo); // warm-up
  const ticks = [];
  const bares = [];
  const sandboxed = [];
  const nodeZeros = [];
  const befores = [];
  if (BEFORE) await tick(repo, BEFORE); // warm-up
  for (let i = 0; i < RUNS; i++) {
    // The calls bare and in their sandbox take turns going first, so neither always runs right
    // after the last round's tick (one run with the bare calls always first had them slower than
    // the same calls in bwrap, 1,989 against 1,797 ms).
    if (i % 2 === 0) bares.push(await bare(repo, calls));
    sandboxed.push(await sandboxedBare(repo, calls));
    if (i % 2 === 1) bares.push(await bare(repo, calls));
    nodeZeros.push(await timed(repo, [process.execPath, '-e', '0']));
    // The two builds take turns going first, so neither always runs right after the bare calls.
    if (BEFORE && i % 2 === 1) befores.push(await tick(repo, BEFORE));
    ticks.push(await tick(repo));
    if (BEFORE && i % 2 === 0) befores.push(await tick(repo, BEFORE));
  }
  // What the runner adds, without the agents' own time (which varies most from run to run).
  const outside = (runs) => median(runs.map((x) => x.wallMs - x.agentsMs));
  const t = {
    wall: median(ticks.map((x) => x.wallMs)),
    cpu: median(ticks.map((x) => x.cpuMs)),
    agents: median(ticks.map((x) => x.agentsMs)),
  };
  const b = { wall: median(bares.map((x) => x.wallMs)), cpu: median(bares.map((x) => x.cpuMs)) };
  const ms = (x) => `${x.toFixed(0).padStart(6)} ms`;
  const ratio = t.wall / b.wall;
  console.log(
    `relais tick with the real claude (${RUNS} paired runs, medians; ${FILES}-file repository; load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')})`,
  );
  console.log(`  relais run (orchestrator + builder, sandboxed)   wall ${ms(t.wall)}`);
  console.log(`    of which the two agents, in their sandbox      wall ${ms(t.agents)}`);
  console.log(`    outside the agents (each run's tick - agents)  wall ${ms(outside(ticks))}`);
  console.log(`  the same two claude calls, bare                  wall ${ms(b.wall)}   cpu ${ms(b.cpu)}`);
  console.log(
    `  tick / bare calls                                wall ${ratio.toFixed(2)}x   (goal <= ${GOAL}x: ${ratio <= GOAL ? 'meets' : 'MISSES'})`,
  );
  // What the runner cannot take below, whatever its own code: its agents in their sandbox
  // (issue 14) and one start of Node. The 1.2x leaves the rest for the runner's own work.
  const inSandbox = median(sandboxed.map((x) => x.wallMs));
  const least = inSandbox + median(nodeZeros.map((x) => x.wallMs));
  console.log(`  the same two calls in the tick's bwrap, bare     wall ${ms(inSandbox)}`);
  console.log(
    `  those + node -e 0 / bare calls                   wall ${(least / b.wall).toFixed(2)}x   (what 1.2x leaves for the runner's own work: ${(GOAL * b.wall - least).toFixed(0)} ms; it takes ${(t.wall - least).toFixed(0)} ms)`,
  );
  // Not a ratio: a sandboxed agent's CPU is not the tick's to count. bwrap's inner process is
  // re-parented to init and reaped there, so its time never reaches the runner's rusage.
  console.log(`  runner CPU (agents in the sandbox not counted)   cpu ${ms(t.cpu)}`);
  if (BEFORE) {
    const bw = median(befores.map((x) => x.wallMs));
    const bc = median(befores.map((x) => x.cpuMs));
    console.log(`  before: relais run (BENCH_BEFORE)                wall ${ms(bw)}   cpu ${ms(bc)}`);
    console.log(`    before: outside the agents                     wall ${ms(outside(befores))}`);
    console.log(
      `  before: tick / bare calls ${(bw / b.wall).toFixed(2)}x wall; after / before ${(t.wall / bw).toFixed(2)}x wall, ${(t.cpu / bc).toFixed(2)}x runner cpu, ${(outside(ticks) / outside(befores)).toFixed(2)}x outside the agents`,
    );
  }
} finally {
  rmSync(base, { recursive: true, force: true, maxRetries: 5 });
}
