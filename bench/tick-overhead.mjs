// npm run bench: runner overhead of one `relais run` tick with an instant scripted agent, on
// generated repositories (20k and 100k files by default), against the raw floor of that tick: the
// git work it cannot avoid (status, diff, add, commit, plain and unhardened) plus the two instant
// agent starts. Then, on a small repository (where any extra cost shows most), the same tick with
// 5,000 earlier runs in relais/history, with a 30k-file ignored node_modules/, with 10,000 loose
// refs, with 3,000 ignored build outputs beside the sources and with 800 loose objects, each
// against the same tick without (the first tick of each apart: past 1,024 loose refs or objects
// the runner packs them once, after that tick); and `relais status` against `node -e 0`. Times are CPU (user + system of every
// process, read from bash's `times`, which stays honest on a shared, busy machine), with
// wall-clock medians beside them. Every ratio printed comes from this one run.
//
// BENCH_BEFORE=<path to another build's dist/cli/main.cjs (or main.js, before it)> runs that build's tick too, alternated
// with this one's on the same repositories (before/after ratios under the same load). Each size
// also counts the git processes of one tick (a `git` on PATH that notes each start): a
// deterministic measure beside the times. BENCH_ONLY=startup runs the start-up section alone.
// At 100k files (BENCH_SCOPED_SIZE) the tick also runs with its task scoped to one folder
// (`src/d0/**`), against the same tick scoped to `src/**` and the floor.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeInstantAgent } from '../scripts/instant-agent.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist/cli/main.cjs');
const BEFORE = process.env.BENCH_BEFORE || null;
const SIZES = (process.env.BENCH_SIZES ?? '20000,100000')
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
/** Repository size for the history, ignored-files and status comparisons; 0 skips them. */
const SMALL = Number(process.env.BENCH_SMALL ?? 1000);
const HISTORY_RUNS = Number(process.env.BENCH_HISTORY ?? 5000);
const IGNORED_FILES = Number(process.env.BENCH_IGNORED ?? 30000);
/** Ignored build outputs (`.o` files of 10 KB) in the source folders; 0 skips that row. */
const OUTPUTS = Number(process.env.BENCH_OUTPUTS ?? 3000);
/** Loose refs (tags, fetched branches not yet packed) in the refs comparison; 0 skips it. */
const LOOSE_REFS = Number(process.env.BENCH_LOOSE_REFS ?? 10000);
/**
 * Loose objects as a loop leaves them (about five a tick) before the runner packs them, past about
 * 1,024 (judge/compact-objects.ts); 0 skips that row.
 */
const LOOSE_OBJECTS = Number(process.env.BENCH_LOOSE_OBJECTS ?? 800);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
/** The size that also runs the tick scoped to one folder (`src/d0/**`); 0 skips that row. */
const SCOPED_SIZE = Number(process.env.BENCH_SCOPED_SIZE ?? 100000);
const SCOPED = { INSTANT_AGENT_SCOPED: '1' };
/** BENCH_ONLY=startup: only the last section (`relais status` against `node -e 0`), no ticks. */
const STARTUP_ONLY = process.env.BENCH_ONLY === 'startup';
const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Bench',
  GIT_AUTHOR_EMAIL: 'b@b',
  GIT_COMMITTER_NAME: 'Bench',
  GIT_COMMITTER_EMAIL: 'b@b',
  CI: 'true',
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env, maxBuffer: 1 << 30 });

// The instant agent (scripts/instant-agent.mjs). Its task is scoped to `src/**` (the whole
// generated tree), or to `src/d0/**` (one folder of 1% of the files) when INSTANT_AGENT_SCOPED=1 is
// in its environment (the scoped row at 100k files).
const writeAgent = (dir) => writeInstantAgent(dir, { edits: 'src/d0/f0.ts', scopedGlob: 'src/d0/**' });

function makeRepo(
  base,
  files,
  { ignored = 0, history = 0, looseRefs = 0, outputs = 0, looseObjects = 0, name = `repo-${files}` } = {},
) {
  const repo = join(base, name);
  for (let i = 0; i < files; i++) {
    const dir = join(repo, 'src', `d${i % 100}`);
    if (i < 100) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `f${Math.floor(i / 100)}.ts`), `export const v${i} = ${i};\n`);
  }
  for (let i = 0; i < ignored; i++) {
    const dir = join(repo, 'node_modules', `p${i % 100}`);
    if (i < 100) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `m${Math.floor(i / 100)}.js`), `module.exports = ${i};\n`);
  }
  const output = Buffer.alloc(10_000, 0x2e);
  for (let i = 0; i < outputs; i++)
    writeFileSync(join(repo, 'src', `d${i % 100}`, `f${Math.floor(i / 100)}.o`), output);
  writeFileSync(join(repo, '.gitignore'), 'node_modules/\n*.o\n');
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, '-c', 'gc.auto=0', 'commit', '-qm', 'generated');
  execFileSync(process.execPath, [CLI, 'init'], { cwd: repo, env, stdio: 'ignore' });
  const config = JSON.parse(readFileSync(join(repo, 'relais.config.json'), 'utf8'));
  config.claude_code_cli.command = writeAgent(base);
  config.verification.templates = [];
  config.history.include_diff_patch = true;
  writeFileSync(join(repo, 'relais.config.json'), JSON.stringify(config, null, 2));
  git(repo, 'add', 'relais.config.json');
  // No automatic gc here: at 20k files it used to start in the background and pack while the
  // first ticks were measured. The repository is packed once instead, as a clone would be.
  git(repo, '-c', 'gc.auto=0', 'commit', '-qm', 'config');
  git(repo, 'gc', '-q');
  // Tags as `git tag` leaves them before any `git pack-refs`: one file each under .git/refs/tags.
  if (looseRefs > 0) {
    const head = `${git(repo, 'rev-parse', 'HEAD').toString().trim()}\n`;
    mkdirSync(join(repo, '.git/refs/tags'), { recursive: true });
    for (let i = 0; i < looseRefs; i++) writeFileSync(join(repo, '.git/refs/tags', `bench-${i}`), head);
  }
  // Blobs written one by one, as commits leave them: spread over the 256 fan-out folders.
  if (looseObjects > 0) {
    const blobs = join(base, `${name}-blobs`);
    mkdirSync(blobs);
    const paths = [];
    for (let i = 0; i < looseObjects; i++) {
      paths.push(join(blobs, `b${i}`));
      writeFileSync(paths[i], `loose object ${i}\n`);
    }
    execFileSync('git', ['hash-object', '-w', '--stdin-paths'], { cwd: repo, env, input: paths.join('\n') });
  }
  // Earlier runs as a tick leaves them: a report and a small patch each.
  for (let r = 0; r < history; r++) {
    const dir = join(repo, 'relais', 'history', `20260101T${String(r).padStart(6, '0')}Z-bench${r % 10}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'REPORT.json'), JSON.stringify({ run_id: r, pad: 'x'.repeat(600) }));
    writeFileSync(join(dir, 'diff.patch'), `--- a/src/d0/f0.ts\n+++ b/src/d0/f0.ts\n@@ -1 +1,2 @@\n+${r}\n`);
  }
  return repo;
}

/**
 * Runs argv through bash and reads the CPU time of everything it started from `times` (children's
 * user and system seconds), with the wall time around it. bash, not sh: bash's `times` reads
 * getrusage and prints milliseconds, dash's counts 10 ms clock ticks, too coarse for `relais status`
 * (about 130 ms) against `node -e 0` (about 50 ms), where one tick moved the ratio by 0.2-0.5.
 */
function timed(cwd, script, args, extraEnv = {}) {
  const started = process.hrtime.bigint();
  // The step's own exit status is kept (`times` alone would always exit 0), so a failed step says so.
  const r = spawnSync('/bin/bash', ['-c', `${script}\nrc=$?\ntimes >&2\nexit $rc`, 'sh', ...args], {
    cwd,
    env: { ...env, ...extraEnv },
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  const lines = r.stderr.trim().split('\n');
  const children = (lines.at(-1) ?? '').match(/(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s/);
  if (r.status !== 0 || !children)
    throw new Error(`bench step failed: ${script} ${r.stderr.slice(-2000)} ${r.stdout.slice(-2000)}`);
  const cpuMs =
    (Number(children[1]) * 60 + Number(children[2]) + Number(children[3]) * 60 + Number(children[4])) * 1000;
  return { wallMs, cpuMs, stdout: r.stdout };
}

function timeTick(repo, cli = CLI, extraEnv = {}) {
  const { wallMs, cpuMs, stdout } = timed(repo, '"$@"', [process.execPath, cli, 'run', '--json'], extraEnv);
  const events = stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const finished = events.at(-1);
  if (finished?.code !== 'SUCCESS') throw new Error(`bench tick did not succeed: ${stdout.slice(-2000)}`);
  const phases = {};
  const changes = events.filter((e) => e.type === 'phase.changed');
  changes.forEach((e, i) => {
    const next = changes[i + 1] ?? finished;
    phases[e.phase] = Date.parse(next.at) - Date.parse(e.at);
  });
  return { wallMs, cpuMs, phases };
}

// The floor: what any tool doing this tick must run, as fast as plain git and sh do it: the two
// instant agent starts (orchestrator, then the builder that edits one file), one status pass,
// the diff against base, and adding and committing the one touched file.
const FLOOR = `
"$1" -p --permission-mode plan < /dev/null > /dev/null
"$1" -p --permission-mode bypassPermissions < /dev/null > /dev/null
git status --porcelain=v2 -z --untracked-files=all > /dev/null
git diff -z --numstat HEAD > /dev/null
git add -- src/d0/f0.ts
git -c gc.auto=0 commit -q -m floor
`;

function timeFloor(repo) {
  return timed(repo, FLOOR, [join(repo, '..', 'agent.sh')]);
}

// The least a runner of this kind adds to the floor, whatever its code, when it starts once per
// tick as `relais run` does (`relais loop` pays Node's start once): it is a Node program (one start
// of `node -e 0`), and it proves the tree clean before an agent runs (one more status
// pass; the floor's status is the judge's after the build). Against the floor, this says how much
// of the 1.5x goal is left for the runner's own work at each size.
const LEAST = `"$2" -e 0
git status --porcelain=v2 -z --untracked-files=all > /dev/null
${FLOOR}`;

function timeLeast(repo) {
  return timed(repo, LEAST, [join(repo, '..', 'agent.sh'), process.execPath]);
}

const NODE_ZERO = '"$@"';

/** Git processes one tick starts: a `git` first on PATH notes each start, then runs the real one. */
function countGit(repo, cli = CLI) {
  const dir = mkdtempSync(join(tmpdir(), 'relais-bench-gitcount-'));
  const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  writeFileSync(join(dir, 'git'), `#!/bin/sh\necho >> "${dir}/count"\nexec "${real}" "$@"\n`);
  chmodSync(join(dir, 'git'), 0o755);
  try {
    timeTick(repo, cli, { PATH: `${dir}:${process.env.PATH}` });
    return readFileSync(join(dir, 'count'), 'utf8').split('\n').length - 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function report(label, xs) {
  const cpu = median(xs.map((x) => x.cpuMs));
  const wall = median(xs.map((x) => x.wallMs));
  return { label, cpu, wall };
}

const ms = (x) => `${x.toFixed(0).padStart(6)} ms`;
function line(r) {
  console.log(`  ${r.label.padEnd(44)} cpu ${ms(r.cpu)}   wall ${ms(r.wall)}`);
}
function ratio(label, a, b, goal) {
  const cpu = a.cpu / b.cpu;
  const verdict = cpu <= goal ? 'meets' : 'MISSES';
  console.log(
    `  ${label.padEnd(44)} cpu ${cpu.toFixed(2)}x   wall ${(a.wall / b.wall).toFixed(2)}x   (goal <= ${goal}x: ${verdict})`,
  );
}

/**
 * The same tick with its task scoped to one folder (`src/d0/**`, 1% of the files) against the tick
 * scoped to `src/**` (the whole tree) and the floor: inside the sandbox the judge's passes read only
 * what the tick can write, which shows only when that is less than the tree.
 */
function reportScoped(size, scoped, whole, floor, wholeBefores) {
  const tick = report('relais run, task scoped to src/d0/**', scoped.ticks);
  console.log(`\n${size} files, the task scoped to one folder (src/d0/**, ${size / 100} files)`);
  line(tick);
  ratio('scoped tick / floor', tick, floor, 1.5);
  console.log(`  scoped / src/** tick: ${(tick.cpu / whole.cpu).toFixed(2)}x cpu`);
  if (!BEFORE) return;
  const before = report('before: scoped tick (BENCH_BEFORE)', scoped.befores);
  line(before);
  console.log(
    `  before: scoped tick / floor ${(before.cpu / floor.cpu).toFixed(2)}x cpu, scoped / src/** ${(before.cpu / report('', wholeBefores).cpu).toFixed(2)}x`,
  );
  console.log(`  scoped after / before: ${(tick.cpu / before.cpu).toFixed(2)}x cpu`);
}

/**
 * The 1k-file tick with what grows in a repository (history, ignored files, loose refs, build
 * outputs, loose objects), each row against the same tick without. The first two are issue 17's
 * numbers; the others carry the same 1.2x bound for what else grows with a repository.
 */
function compareHistoryAndIgnored(history) {
  const plain = makeRepo(base, SMALL, { name: 'plain' });
  /** A row of what grows (absent when its count is 0): its repository made with `grows`. */
  const grows = (count, what, short, name, options) =>
    count > 0 && {
      label: `same with ${count} ${what}`,
      short,
      goal: 1.2,
      options: { name, ...options },
      repo: makeRepo(base, SMALL, { name, ...options }),
    };
  const rows = [
    {
      label: `same with ${HISTORY_RUNS} history runs`,
      short: 'history',
      goal: 1.1,
      options: { name: 'history', history: HISTORY_RUNS },
      repo: history,
    },
    grows(IGNORED_FILES, 'ignored node_modules files', 'ignored node_modules', 'ignored', {
      ignored: IGNORED_FILES,
    }),
    grows(LOOSE_REFS, 'loose refs', 'loose refs', 'refs', { looseRefs: LOOSE_REFS }),
    grows(OUTPUTS, 'ignored *.o beside sources', 'ignored build outputs', 'outputs', { outputs: OUTPUTS }),
    grows(LOOSE_OBJECTS, 'loose objects', 'loose objects', 'objects', { looseObjects: LOOSE_OBJECTS }),
  ].filter(Boolean);
  // The older build ticks copies of its own: what one build leaves between ticks (history's tally,
  // loose objects, packs) is not the other's to find, as it would not be in one user's repository.
  const plainBefore = BEFORE && makeRepo(base, SMALL, { name: 'plain-before' });
  for (const row of rows)
    if (BEFORE)
      row.repoBefore = makeRepo(base, SMALL, { ...row.options, name: `${row.options.name}-before` });
  // The first tick of each is not in the medians: it does what a repository needs once (past 1,024
  // loose refs or objects the runner packs them after it), shown apart below.
  timeTick(plain);
  for (const row of rows) row.first = timeTick(row.repo);
  if (BEFORE) for (const repo of [plainBefore, ...rows.map((r) => r.repoBefore)]) timeTick(repo, BEFORE);
  const runs = { plain: [], before: [] };
  for (const row of rows) Object.assign(row, { runs: [], before: [] });
  for (let i = 0; i < RUNS; i++) {
    runs.plain.push(timeTick(plain));
    for (const row of rows) row.runs.push(timeTick(row.repo));
    if (!BEFORE) continue;
    runs.before.push(timeTick(plainBefore, BEFORE));
    for (const row of rows) row.before.push(timeTick(row.repoBefore, BEFORE));
  }
  const p = report(`tick, ${SMALL} files`, runs.plain);
  console.log(`\n${SMALL} files: what history and ignored files add`);
  line(p);
  for (const row of rows) {
    const r = report(row.label, row.runs);
    line(r);
    ratio(`${row.short} / plain`, r, p, row.goal);
  }
  console.log(
    `  first ticks, not in the medians (cpu): ${rows.map((r) => `${r.short} ${r.first.cpuMs.toFixed(0)} ms`).join(', ')}`,
  );
  if (!BEFORE) return;
  const bp = report('before: plain', runs.before);
  line(bp);
  for (const row of rows) {
    const b = report('', row.before);
    console.log(
      `  before: ${row.short} / plain ${(b.cpu / bp.cpu).toFixed(2)}x (cpu), ${(b.wall / bp.wall).toFixed(2)}x (wall)`,
    );
  }
}

const base = mkdtempSync(join(tmpdir(), 'relais-bench-'));
try {
  console.log(`relais tick overhead (${RUNS} runs each, medians; node ${process.version})`);
  for (const size of STARTUP_ONLY ? [] : SIZES) {
    const repo = makeRepo(base, size);
    timeTick(repo); // warm the page cache and git's index stat data once
    const ticks = [];
    const floors = [];
    const leasts = [];
    const befores = [];
    const scoped = size === SCOPED_SIZE ? { ticks: [], befores: [] } : null;
    if (scoped) timeTick(repo, CLI, SCOPED);
    // Paired: a tick, then the floor (then the older build's tick), so all see the same load.
    for (let i = 0; i < RUNS; i++) {
      ticks.push(timeTick(repo));
      floors.push(timeFloor(repo));
      leasts.push(timeLeast(repo));
      if (BEFORE) befores.push(timeTick(repo, BEFORE));
      if (!scoped) continue;
      scoped.ticks.push(timeTick(repo, CLI, SCOPED));
      if (BEFORE) scoped.befores.push(timeTick(repo, BEFORE, SCOPED));
    }
    const tick = report('relais run (whole CLI, instant agent)', ticks);
    const floor = report('raw floor (agent x2, status, diff, add, commit)', floors);
    const gits = countGit(repo);
    const phaseNames = Object.keys(ticks[0].phases);
    const phases = phaseNames.map((p) => `${p} ${median(ticks.map((t) => t.phases[p] ?? 0))}`).join(', ');
    console.log(`\n${size} files`);
    line(tick);
    line(floor);
    ratio('tick / floor', tick, floor, 1.5);
    const least = report('floor + node -e 0 + a status before the agents', leasts);
    line(least);
    console.log(
      `  that least / floor: ${(least.cpu / floor.cpu).toFixed(2)}x cpu (what the 1.5x leaves for the runner's own work: ${(1.5 * floor.cpu - least.cpu).toFixed(0)} ms)`,
    );
    console.log(`  phases (wall ms): ${phases}`);
    console.log(`  git processes per tick: ${gits} (the floor runs 4)`);
    if (BEFORE) {
      const before = report('before: relais run (BENCH_BEFORE)', befores);
      line(before);
      console.log(
        `  before: tick / floor ${(before.cpu / floor.cpu).toFixed(2)}x cpu; git processes per tick: ${countGit(repo, BEFORE)}`,
      );
      console.log(`  after / before: ${(tick.cpu / before.cpu).toFixed(2)}x cpu`);
    }
    if (scoped) reportScoped(size, scoped, tick, floor, befores);
    rmSync(repo, { recursive: true, force: true, maxRetries: 5 }); // a background git gc may still write
  }

  // BENCH_SMALL=0: the 20k/100k ticks only (the 1k-file comparisons and status are skipped).
  if (SMALL > 0) smallRepositories(base);
} finally {
  rmSync(base, { recursive: true, force: true, maxRetries: 5 });
}

/** On small repositories: the tick with history and with ignored files, and `relais status`. */
function smallRepositories(base) {
  const history = makeRepo(base, SMALL, { name: 'history', history: HISTORY_RUNS });
  if (!STARTUP_ONLY) compareHistoryAndIgnored(history);
  const statuses = [];
  const zeros = [];
  const beforeStatuses = [];
  for (let i = 0; i < RUNS * 2; i++) {
    statuses.push(timed(history, NODE_ZERO, [process.execPath, CLI, 'status']));
    zeros.push(timed(history, NODE_ZERO, [process.execPath, '-e', '0']));
    if (BEFORE) beforeStatuses.push(timed(history, NODE_ZERO, [process.execPath, BEFORE, 'status']));
  }
  const st = report('relais status', statuses);
  const zero = report('node -e 0', zeros);
  console.log('\nstart-up');
  line(st);
  line(zero);
  ratio('relais status / node -e 0', st, zero, 2);
  if (BEFORE) {
    const bs = report('before: relais status', beforeStatuses);
    line(bs);
    console.log(`  before: relais status / node -e 0 ${(bs.cpu / zero.cpu).toFixed(2)}x cpu`);
  }
}
