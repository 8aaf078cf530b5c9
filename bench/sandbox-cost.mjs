// npm run bench: what the bubblewrap sandbox (issue 14) costs in a real `relais run` tick. Two
// twin repositories (the same files, the same instant scripted agent, three instant verification
// commands per tick), one with "sandbox": "bwrap", the other with "sandbox": "off", ticked in
// turn so both see the same machine load. From each tick's own NDJSON events: the duration of
// each agent start (orchestrator and builder: the runner's spawn to the agent's exit, so the
// sandbox's set-up and tear-down are in it) and of each verification command, and the whole
// tick's wall time. Prints medians and the ratios sandboxed / unsandboxed, all from this one run,
// with the load average before and after (a shared machine).
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist/cli/main.cjs');
const RUNS = Number(process.env.BENCH_RUNS ?? 10);
const FILES = Number(process.env.BENCH_FILES ?? 200);
const CHECKS = ['v1', 'v2', 'v3'];
const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Bench',
  GIT_AUTHOR_EMAIL: 'b@b',
  GIT_COMMITTER_NAME: 'Bench',
  GIT_COMMITTER_EMAIL: 'b@b',
  CI: 'true',
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env });

/** An agent that answers at once: a shell script (no interpreter start-up measured as "agent"). */
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
    verification: { fast: CHECKS, slow: [] },
    builder: { mode: 'claude_code', max_turns: 2, instructions: 'edit' },
  });
  const wrap = (text) =>
    JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: text, total_cost_usd: 0 });
  const builder = wrap(
    JSON.stringify({ summary: 'edited', files_intended: ['src/d0/f0.ts'], commands_ran: [], notes: [] }),
  );
  const quote = (s) => s.replace(/'/g, "'\\''");
  const path = join(dir, 'agent.sh');
  writeFileSync(
    path,
    `#!/bin/sh
cat > /dev/null
case "$*" in
  *--version*) echo '9.9.9 (bench agent)' ;;
  *"--permission-mode plan"*) printf '%s\\n' '${quote(wrap(task))}' ;;
  *) date +%s%N >> src/d0/f0.ts; printf '%s\\n' '${quote(builder)}' ;;
esac
`,
  );
  chmodSync(path, 0o755);
  return path;
}

function makeRepo(base, name, sandbox, agent) {
  const repo = join(base, name);
  for (let i = 0; i < FILES; i++) {
    const dir = join(repo, 'src', `d${i % 20}`);
    if (i < 20) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `f${Math.floor(i / 20)}.ts`), `export const v${i} = ${i};\n`);
  }
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'generated');
  execFileSync(process.execPath, [CLI, 'init'], { cwd: repo, env, stdio: 'ignore' });
  const config = JSON.parse(readFileSync(join(repo, 'relais.config.json'), 'utf8'));
  config.claude_code_cli.command = agent;
  config.verification.templates = CHECKS.map((id) => ({ id, cmd: 'true', args: [] }));
  config.scope.default_allowed_globs = ['src/**'];
  config.sandbox = sandbox;
  writeFileSync(join(repo, 'relais.config.json'), JSON.stringify(config, null, 2));
  git(repo, 'add', 'relais.config.json');
  git(repo, 'commit', '-qm', 'config');
  return repo;
}

/** One tick; its wall time and, from its events, each agent start's and each check's duration. */
function tick(repo, sandbox) {
  const started = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [CLI, 'run', '--json'], { cwd: repo, env, encoding: 'utf8' });
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  const events = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const done = events.find((e) => e.type === 'tick.finished');
  if (r.status !== 0 || done?.code !== 'SUCCESS' || done.sandbox !== sandbox)
    throw new Error(
      `bench tick (${sandbox}) did not succeed as expected: ${r.stdout.slice(-2000)}${r.stderr}`,
    );
  const agents = events.filter((e) => e.type === 'agent.finished').map((e) => e.duration_ms);
  const checks = events.filter((e) => e.type === 'verify.finished').map((e) => e.duration_ms);
  if (agents.length !== 2 || checks.length !== CHECKS.length)
    throw new Error(`unexpected tick shape: ${agents.length} agents, ${checks.length} checks`);
  const phases = {};
  const changes = events.filter((e) => e.type === 'phase.changed');
  changes.forEach((e, i) => {
    phases[e.phase] = Date.parse((changes[i + 1] ?? done).at) - Date.parse(e.at);
  });
  return { wallMs, agents, checks, phases };
}

const base = mkdtempSync(join(tmpdir(), 'relais-bench-sandbox-'));
try {
  const agent = writeAgent(base);
  const boxedRepo = makeRepo(base, 'bwrap', 'bwrap', agent);
  const plainRepo = makeRepo(base, 'off', 'off', agent);
  const probe = spawnSync(process.execPath, [CLI, 'doctor'], { cwd: boxedRepo, env, encoding: 'utf8' });
  if (!/sandbox\s+.*bubblewrap/.test(probe.stdout)) {
    console.log('sandbox-cost: no bubblewrap sandbox here (relais doctor); nothing measured');
    process.exit(0);
  }
  const loadBefore = loadavg()[0];
  // Warm the page cache and git's stat data once each.
  tick(boxedRepo, 'bwrap');
  tick(plainRepo, 'off');
  const boxed = [];
  const plain = [];
  for (let i = 0; i < RUNS; i++) {
    boxed.push(tick(boxedRepo, 'bwrap'));
    plain.push(tick(plainRepo, 'off'));
  }
  const loadAfter = loadavg()[0];
  const rows = [
    ['agent start (orchestrator, builder)', (t) => t.agents],
    ['verification command', (t) => t.checks],
    ['whole tick (relais run, wall)', (t) => [t.wallMs]],
  ];
  console.log(
    `sandbox-cost: relais run, instant scripted agent, ${CHECKS.length} instant checks per tick, ${FILES} files, ${RUNS} ticks each (medians; load average ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after)`,
  );
  for (const [label, pick] of rows) {
    const b = median(boxed.flatMap(pick));
    const p = median(plain.flatMap(pick));
    console.log(
      `  ${label.padEnd(38)} off ${p.toFixed(0).padStart(5)} ms   bwrap ${b.toFixed(0).padStart(5)} ms   ratio ${(b / p).toFixed(2)}x   +${(b - p).toFixed(0)} ms`,
    );
  }
  for (const [name, ticks] of [
    ['off', plain],
    ['bwrap', boxed],
  ]) {
    const phases = Object.keys(ticks[0].phases)
      .map((phase) => `${phase} ${median(ticks.map((t) => t.phases[phase] ?? 0))}`)
      .join(', ');
    console.log(`  phases, ${name} (wall ms): ${phases}`);
  }
} finally {
  rmSync(base, { recursive: true, force: true, maxRetries: 5 });
}
