// npm run bench: start-up time of `relais --help`, `relais run --help`, `relais --version` and
// `relais status` against `node -e 0` (issue 17's budget: within 2x the bare Node start). Help is
// answered from a plain table before any command module loads; status loads only its own modules.
//
// Times are CPU (user + system of the process and the git processes it starts), read from the
// shell's `times`, because on a shared machine wall time mostly measures the neighbours. bash's
// `times` counts in milliseconds (dash's in 10 ms ticks); each sample is still BENCH_BATCH runs in
// one shell, divided by the batch, so one slow start does not make the sample.
// Commands are paired: each round runs every command once (one batch each) in turn, so all see the
// same load; medians over BENCH_RUNS rounds. Wall medians are printed beside the CPU.
//
// BENCH_BEFORE=<another build's dist/cli/main.cjs (or main.js, before it)> (absolute, with its package.json two folders up)
// adds that build's --help and status to every round, and prints after/before from the same run.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist/cli/main.cjs');
const BEFORE = process.env.BENCH_BEFORE || null;
const RUNS = Number(process.env.BENCH_RUNS ?? 11);
const BATCH = Number(process.env.BENCH_BATCH ?? 5);
const env = {
  ...process.env,
  CI: 'true',
  GIT_AUTHOR_NAME: 'B',
  GIT_AUTHOR_EMAIL: 'b@b',
  GIT_COMMITTER_NAME: 'B',
  GIT_COMMITTER_EMAIL: 'b@b',
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** One batch: `argv` BATCH times in one shell; CPU and wall per run, from `times` and the clock. */
function batch(argv, cwd) {
  const started = process.hrtime.bigint();
  const script = `i=0\nwhile [ $i -lt ${BATCH} ]; do "$@" > /dev/null 2>&1 || exit 90; i=$((i+1)); done\ntimes >&2`;
  const run = spawnSync('/bin/bash', ['-c', script, 'sh', ...argv], { cwd, env, encoding: 'utf8' });
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6 / BATCH;
  const children = (run.stderr.trim().split('\n').at(-1) ?? '').match(/(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s/);
  if (run.status !== 0 || !children) throw new Error(`${argv.join(' ')} failed: ${run.stderr.slice(-1000)}`);
  const cpuMs =
    (Number(children[1]) * 60 + Number(children[2]) + Number(children[3]) * 60 + Number(children[4])) * 1000;
  return { cpuMs: cpuMs / BATCH, wallMs };
}

const repo = mkdtempSync(join(tmpdir(), 'relais-bench-startup-'));
try {
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo, env });
  writeFileSync(join(repo, 'README.md'), 'bench\n');
  execFileSync('git', ['add', '-A'], { cwd: repo, env });
  execFileSync('git', ['commit', '-q', '-m', 'initial'], { cwd: repo, env });
  execFileSync(process.execPath, [CLI, 'init'], { cwd: repo, env, stdio: 'ignore' });

  const node = process.execPath;
  const commands = [
    ['node -e 0', [node, '-e', '0']],
    ['relais --help', [node, CLI, '--help']],
    ['relais run --help', [node, CLI, 'run', '--help']],
    ['relais --version', [node, CLI, '--version']],
    ['relais status', [node, CLI, 'status']],
    ...(BEFORE
      ? [
          ['before: --help', [node, BEFORE, '--help']],
          ['before: status', [node, BEFORE, 'status']],
        ]
      : []),
  ];
  const samples = commands.map(() => []);
  const loadAtStart = loadavg()[0];
  for (let round = 0; round < RUNS; round++)
    commands.forEach(([, argv], i) => {
      samples[i].push(batch(argv, repo));
    });

  const cpu = samples.map((xs) => median(xs.map((x) => x.cpuMs)));
  const wall = samples.map((xs) => median(xs.map((x) => x.wallMs)));
  console.log(
    `start-up, CPU medians of ${RUNS} paired rounds of ${BATCH} runs (budget: 2.0x node -e 0); load average ${loadAtStart.toFixed(1)} -> ${loadavg()[0].toFixed(1)}`,
  );
  commands.forEach(([name], i) => {
    const verdict = i === 0 ? '' : cpu[i] / cpu[0] <= 2 ? '  meets 2x' : '  MISSES 2x';
    console.log(
      `  ${name.padEnd(20)} cpu ${cpu[i].toFixed(1).padStart(6)} ms  ${(cpu[i] / cpu[0]).toFixed(2)}x   wall ${wall[i].toFixed(1).padStart(6)} ms  ${(wall[i] / wall[0]).toFixed(2)}x${verdict}`,
    );
  });
  if (BEFORE) {
    // Per round, after against before in the same round: the load moves less within a round.
    const paired = (after, before) =>
      median(samples[after].map((x, round) => x.cpuMs / samples[before][round].cpuMs));
    const at = (name) => commands.findIndex(([n]) => n === name);
    console.log(
      `  after / before, paired per round: --help ${paired(at('relais --help'), at('before: --help')).toFixed(2)}x, status ${paired(at('relais status'), at('before: status')).toFixed(2)}x`,
    );
  }
} finally {
  rmSync(repo, { recursive: true, force: true });
}
