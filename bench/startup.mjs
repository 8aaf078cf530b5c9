// npm run bench: start-up time of `relais --help`, `relais run --help` and `relais status` against
// `node -e 0` (issue 17's budget: within 2x the bare Node start). Help is answered from a plain
// table before any command module loads; status loads only its own modules. Prints medians.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist/cli/main.js');
const RUNS = Number(process.env.BENCH_RUNS ?? 21);
const env = {
  ...process.env,
  CI: 'true',
  GIT_AUTHOR_NAME: 'B',
  GIT_AUTHOR_EMAIL: 'b@b',
  GIT_COMMITTER_NAME: 'B',
  GIT_COMMITTER_EMAIL: 'b@b',
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function time(args, cwd) {
  const samples = [];
  for (let i = 0; i < RUNS; i++) {
    const start = process.hrtime.bigint();
    const run = spawnSync(process.execPath, args, { cwd, env, stdio: 'ignore' });
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (run.status !== 0) throw new Error(`${args.join(' ')} exited ${run.status}`);
  }
  return median(samples);
}

const repo = mkdtempSync(join(tmpdir(), 'relais-bench-startup-'));
try {
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo, env });
  writeFileSync(join(repo, 'README.md'), 'bench\n');
  execFileSync('git', ['add', '-A'], { cwd: repo, env });
  execFileSync('git', ['commit', '-q', '-m', 'initial'], { cwd: repo, env });
  execFileSync(process.execPath, [CLI, 'init'], { cwd: repo, env, stdio: 'ignore' });

  const floor = time(['-e', '0'], repo);
  const rows = [
    ['node -e 0', floor],
    ['relais --help', time([CLI, '--help'], repo)],
    ['relais run --help', time([CLI, 'run', '--help'], repo)],
    ['relais --version', time([CLI, '--version'], repo)],
    ['relais status', time([CLI, 'status'], repo)],
    // BENCH_BEFORE=<another build's dist/cli/main.js>: the same commands of that build, this run.
    ...(process.env.BENCH_BEFORE
      ? [
          ['before: --help', time([process.env.BENCH_BEFORE, '--help'], repo)],
          ['before: status', time([process.env.BENCH_BEFORE, 'status'], repo)],
        ]
      : []),
  ];
  console.log(`start-up, median of ${RUNS} runs (budget: 2.0x node -e 0)`);
  for (const [name, ms] of rows)
    console.log(`  ${name.padEnd(20)} ${ms.toFixed(1).padStart(7)} ms  ${(ms / floor).toFixed(2)}x`);
} finally {
  rmSync(repo, { recursive: true, force: true });
}
