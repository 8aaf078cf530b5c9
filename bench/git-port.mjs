// npm run bench: what simple-git (the design card's git library) would cost the judge's git port
// per call, against the hand-rolled spawn in source/engine/judge/git.ts, with the same hardening
// flags and environment. Sequential calls of `git rev-parse HEAD` (the judge's calls are mostly
// this small); CPU of this process (the spawn and the parsing around it), and wall per call.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleGit } from 'simple-git';
import { Git } from '../dist/engine/judge/git.js';

const CALLS = Number(process.env.BENCH_GIT_CALLS ?? 40);
const ROUNDS = Number(process.env.BENCH_RUNS ?? 5);
const repo = mkdtempSync(join(tmpdir(), 'relais-gitport-'));
// A small environment for both: simple-git 4 refuses to run with some variables set (its
// environment guard, e.g. GIT_SSL_CAINFO), so the user's environment cannot pass through as is.
const env = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  GIT_AUTHOR_NAME: 'B',
  GIT_AUTHOR_EMAIL: 'b@b',
  GIT_COMMITTER_NAME: 'B',
  GIT_COMMITTER_EMAIL: 'b@b',
};
execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo });
writeFileSync(join(repo, 'a.txt'), 'a\n');
execFileSync('git', ['add', '-A'], { cwd: repo });
execFileSync('git', ['commit', '-qm', 'a'], { cwd: repo, env });

const hand = new Git(repo, env);
const config = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.pager=cat',
  'color.ui=never',
  'core.quotePath=false',
  'advice.detachedHead=false',
  'gc.auto=0',
  'maintenance.auto=false',
  'core.trustctime=true',
  'core.checkStat=default',
  'core.ignoreStat=false',
];
// simple-git refuses some of these keys unless told they are wanted (its own safety plugin).
const lib = simpleGit({
  baseDir: repo,
  config,
  unsafe: { allowUnsafeHooksPath: true, allowUnsafePager: true, allowUnsafeFsMonitor: true },
  // Its environment guard also drops GIT_* variables it was not told about, the port's pinned
  // GIT_DIR / GIT_WORK_TREE / GIT_INDEX_FILE among them.
  allowEnvironment: [
    ...Object.keys(env).filter((k) => k.startsWith('GIT_')),
    'GIT_TERMINAL_PROMPT',
    'GIT_OPTIONAL_LOCKS',
    'GIT_DIR',
    'GIT_WORK_TREE',
    'GIT_COMMON_DIR',
    'GIT_INDEX_FILE',
    'PAGER',
  ],
}).env({ ...env, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C', PAGER: 'cat' });
const args = ['--no-pager', '--literal-pathspecs', '--no-replace-objects', 'rev-parse', 'HEAD'];

async function measure(call) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < CALLS; i++) {
    const out = await call();
    if (!/^[0-9a-f]{40}/.test(out)) throw new Error(`unexpected output: ${out}`);
  }
  const used = process.cpuUsage(cpu);
  return { cpuMs: (used.user + used.system) / 1000 / CALLS, wallMs: (performance.now() - started) / CALLS };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = { hand: [], lib: [] };
try {
  for (let r = 0; r < ROUNDS; r++) {
    results.hand.push(await measure(async () => (await hand.ok(args.slice(3))).toString()));
    results.lib.push(await measure(() => lib.raw(args)));
  }
  const row = (name, xs) => {
    const cpu = median(xs.map((x) => x.cpuMs));
    const wall = median(xs.map((x) => x.wallMs));
    console.log(`  ${name.padEnd(26)} cpu ${cpu.toFixed(2)} ms/call   wall ${wall.toFixed(2)} ms/call`);
    return { cpu, wall };
  };
  console.log(
    `git port: ${CALLS} calls x ${ROUNDS} rounds of git rev-parse HEAD (medians, this process's CPU)`,
  );
  const h = row('hand-rolled spawn (git.ts)', results.hand);
  const l = row('simple-git raw()', results.lib);
  console.log(
    `  simple-git / hand-rolled: cpu ${(l.cpu / h.cpu).toFixed(2)}x, wall ${(l.wall / h.wall).toFixed(2)}x`,
  );
} finally {
  rmSync(repo, { recursive: true, force: true });
}
