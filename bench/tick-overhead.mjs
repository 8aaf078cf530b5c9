// npm run bench: runner overhead of one `relais run` tick with an instant scripted agent, on
// generated repositories of 1k and 20k files, against the floor of the raw git commands the judge
// needs (the same commands, unhardened, run back to back). Prints medians and the ratio.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist/cli/main.js');
const SIZES = (process.env.BENCH_SIZES ?? '1000,20000').split(',').map(Number);
// Files in an ignored node_modules/ (the judge fingerprints ignored folders up to a cap).
const IGNORED = Number(process.env.BENCH_IGNORED ?? 0);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
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

// An agent that answers instantly: a shell script, so no interpreter start-up is measured as "agent".
function writeAgent(dir) {
  const task = JSON.stringify({
    task_id: 'B1',
    milestone_id: 'BENCH',
    task_kind: 'execute',
    intent: 'bench edit',
    scope: {
      allowed_globs: ['src/**'],
      forbidden_globs: [],
      allow_new_files: false,
      allow_lockfile_changes: false,
    },
    diff_limits: { max_files_touched: 5, max_lines_changed: 100 },
    verification: { fast: [], slow: [] },
    builder: { mode: 'claude_code', max_turns: 2, instructions: 'edit' },
  });
  const wrap = (text) =>
    JSON.stringify({
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: text,
      total_cost_usd: 0,
      num_turns: 1,
    });
  const builder = wrap(
    JSON.stringify({ summary: 'edited', files_intended: ['src/d0/f0.ts'], commands_ran: [], notes: [] }),
  );
  const script = `#!/bin/sh
cat > /dev/null
case "$*" in
  *"--permission-mode plan"*) printf '%s\\n' '${wrap(task).replace(/'/g, "'\\''")}' ;;
  *) date +%s%N >> src/d0/f0.ts; printf '%s\\n' '${builder.replace(/'/g, "'\\''")}' ;;
esac
`;
  const path = join(dir, 'agent.sh');
  writeFileSync(path, script);
  chmodSync(path, 0o755);
  return path;
}

function makeRepo(base, files) {
  const repo = join(base, `repo-${files}`);
  for (let i = 0; i < files; i++) {
    const dir = join(repo, 'src', `d${i % 100}`);
    if (i < 100) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `f${Math.floor(i / 100)}.ts`), `export const v${i} = ${i};\n`);
  }
  for (let i = 0; i < IGNORED; i++) {
    const dir = join(repo, 'node_modules', `p${i % 100}`);
    if (i < 100) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `m${Math.floor(i / 100)}.js`), `module.exports = ${i};\n`);
  }
  writeFileSync(join(repo, '.gitignore'), 'node_modules/\n');
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'generated');
  execFileSync(process.execPath, [CLI, 'init'], { cwd: repo, env, stdio: 'ignore' });
  const config = JSON.parse(readFileSync(join(repo, 'relais.config.json'), 'utf8'));
  config.claude_code_cli.command = writeAgent(base);
  config.verification.templates = [];
  config.history.include_diff_patch = true;
  writeFileSync(join(repo, 'relais.config.json'), JSON.stringify(config, null, 2));
  git(repo, 'add', 'relais.config.json');
  git(repo, 'commit', '-qm', 'config');
  return repo;
}

function timeTick(repo) {
  const started = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [CLI, 'run', '--json'], {
    cwd: repo,
    env,
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const events = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const finished = events.at(-1);
  if (finished?.code !== 'SUCCESS')
    throw new Error(`bench tick did not succeed: ${r.stdout.slice(-2000)} ${r.stderr}`);
  const phases = {};
  const changes = events.filter((e) => e.type === 'phase.changed');
  changes.forEach((e, i) => {
    const next = changes[i + 1] ?? finished;
    phases[e.phase] = Date.parse(next.at) - Date.parse(e.at);
  });
  return { ms, phases };
}

// The git work the judge cannot avoid, once, as fast as plain git does it.
function timeGitFloor(repo) {
  const base = git(repo, 'rev-parse', 'HEAD').toString().trim();
  writeFileSync(join(repo, 'src/d0/f0.ts'), `export const changed = ${Date.now()};\n`);
  const index = join(tmpdir(), `bench-index-${process.pid}`);
  const started = process.hrtime.bigint();
  git(repo, 'status', '--porcelain=v1', '-z', '--untracked-files=all');
  git(repo, 'ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory');
  git(repo, 'diff', '-z', '--name-only', base);
  git(repo, 'ls-files', '-z', '--others', '--exclude-standard');
  const withIndex = { cwd: repo, env: { ...env, GIT_INDEX_FILE: index }, maxBuffer: 1 << 30 };
  execFileSync('git', ['read-tree', base], withIndex);
  execFileSync('git', ['add', '-A', '--', 'src/d0/f0.ts'], withIndex);
  execFileSync('git', ['diff', '--cached', '-z', '--numstat', base], withIndex);
  execFileSync('git', ['diff', '--cached', '--binary', base], withIndex);
  execFileSync('git', ['write-tree'], withIndex);
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  rmSync(index, { force: true });
  git(repo, 'checkout', '-q', '--', '.');
  return ms;
}

const base = mkdtempSync(join(tmpdir(), 'relais-bench-'));
try {
  console.log(
    `relais tick overhead (${RUNS} runs each, medians; node ${process.version}; ${IGNORED} ignored files in node_modules/)`,
  );
  for (const size of SIZES) {
    const repo = makeRepo(base, size);
    const ticks = Array.from({ length: RUNS }, () => timeTick(repo));
    const floors = Array.from({ length: RUNS }, () => timeGitFloor(repo));
    const tick = median(ticks.map((t) => t.ms));
    const floor = median(floors);
    const phaseNames = Object.keys(ticks[0].phases);
    const phases = phaseNames.map((p) => `${p} ${median(ticks.map((t) => t.phases[p] ?? 0))}`).join(', ');
    console.log(`\n${size} files`);
    console.log(`  relais run (whole CLI, instant agent): ${tick.toFixed(0)} ms`);
    console.log(`  raw git floor of the judge:            ${floor.toFixed(0)} ms`);
    console.log(`  ratio:                                 ${(tick / floor).toFixed(2)}x`);
    console.log(`  phases (ms): ${phases}`);
  }
} finally {
  rmSync(base, { recursive: true, force: true });
}
