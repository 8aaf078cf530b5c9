// npm run bench: issue 19's parallel lanes. The same 4-task plan (independent tasks, each with its
// own Scope) through `ralphy start --yes --json` at --parallel 1 and --parallel 4, with a scripted
// model (test/support/fake-claude.mjs) that takes a fixed time per orchestrator and builder call
// (BENCH_CALL_MS, default 2000). Prints the wall time of IMPLEMENTATION (from the run's own
// events), the speed-up, and the runner's CPU: user + system of the runner process alone (read in
// the process at exit, so agents and git children are not counted), in total and per lane task.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist/cli/main.cjs');
const FAKE = join(ROOT, 'test/support/fake-claude.mjs');
const CALL_MS = Number(process.env.BENCH_CALL_MS ?? 2000);
const MARKERS = ['ALPHA', 'BRAVO', 'CHARLIE', 'DELTA'];
const FILES = ['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/d.ts'];
const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Bench',
  GIT_AUTHOR_EMAIL: 'b@b',
  GIT_COMMITTER_NAME: 'Bench',
  GIT_COMMITTER_EMAIL: 'b@b',
  CI: 'true',
  IS_SANDBOX: '1',
};
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env });

const tasksMd = MARKERS.map((m, i) =>
  [
    `## Task ${i + 1}: Build ${m}`,
    '- **Status**: pending',
    `- **Description**: ${FILES[i]}`,
    `- **Scope**: ${FILES[i]}`,
    '',
  ].join('\n'),
).join('\n');

function scenario() {
  const keyed = {};
  MARKERS.forEach((m, i) => {
    const task = {
      task_id: `T${i + 1}`,
      milestone_id: 'M1',
      task_kind: 'execute',
      intent: `Write ${FILES[i]}`,
      scope: {
        allowed_globs: [FILES[i]],
        forbidden_globs: [],
        allow_new_files: false,
        allow_lockfile_changes: false,
      },
      diff_limits: { max_files_touched: 5, max_lines_changed: 100 },
      verification: { fast: ['ok'], slow: [] },
      builder: { mode: 'claude_code', max_turns: 4, instructions: `Write ${FILES[i]} [lane ${m}]` },
    };
    keyed[m] = {
      match: { orchestrator: `Task ${i + 1}: Build ${m}`, builder: `[lane ${m}]` },
      orchestrator: [{ result_json: task, delay_ms: CALL_MS }],
      builder: [
        {
          actions: [{ write: FILES[i], content: `export const ${m.toLowerCase()} = 1;\n` }],
          result_json: { summary: 'did it', files_intended: [FILES[i]], commands_ran: [], notes: [] },
          delay_ms: CALL_MS,
        },
      ],
    };
  });
  return {
    spec: [
      {
        actions: [
          { write: 'specs/SPEC.md', content: '# Spec\n\nFour constants.\n' },
          { write: 'specs/TASKS.md', content: tasksMd },
        ],
        result: 'Written.\n\nEXIT_SIGNAL: true',
      },
    ],
    qa: [
      {
        actions: [{ write: 'specs/QA_REPORT.md', content: '# QA report\n\n## Summary\nFine.\n' }],
        result: 'Done.\nEXIT_SIGNAL: true',
      },
    ],
    keyed,
  };
}

function project(base) {
  const root = join(base, 'repo');
  mkdirSync(join(root, 'src'), { recursive: true });
  mkdirSync(join(base, 'home'), { recursive: true });
  git(root, 'init', '-q', '-b', 'main');
  writeFileSync(join(root, 'PRD.md'), '# Constants\n\n## Objective\nFour constants.\n');
  for (const [i, f] of FILES.entries()) writeFileSync(join(root, f), `export const x${i} = 0;\n`);
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', 'initial');
  const run = spawnSync(process.execPath, [CLI, 'init'], {
    cwd: root,
    env: { ...env, HOME: join(base, 'home') },
  });
  if (run.status !== 0) throw new Error(`relais init failed: ${run.stdout}${run.stderr}`);
  const configPath = join(root, 'relais.config.json');
  const config = JSON.parse(readFileSync(configPath, 'utf8'));
  config.claude_code_cli.command = FAKE;
  config.scope.default_allowed_globs = ['src/**'];
  config.verification.templates = [{ id: 'ok', cmd: 'node', args: ['-e', 'process.exit(0)'] }];
  config.planner = { ...config.planner, enabled: false };
  writeFileSync(configPath, `${JSON.stringify(config, null, 2)}\n`);
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', 'config');
  return root;
}

function runOnce(parallel) {
  const base = mkdtempSync(join(tmpdir(), 'relais-bench-parallel-'));
  try {
    const root = project(base);
    const scenarioPath = join(base, 'scenario.json');
    writeFileSync(scenarioPath, JSON.stringify(scenario()));
    const cpuFile = join(base, 'cpu.json');
    const preload = join(base, 'cpu.cjs');
    writeFileSync(
      preload,
      `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(cpuFile)}, JSON.stringify(process.cpuUsage())));\n`,
    );
    const run = spawnSync(
      process.execPath,
      ['--require', preload, CLI, 'start', '--yes', '--json', '--parallel', String(parallel)],
      {
        cwd: root,
        env: { ...env, HOME: join(base, 'home'), RELAIS_FAKE_SCENARIO: scenarioPath },
        encoding: 'utf8',
        maxBuffer: 1 << 28,
      },
    );
    const events = run.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const at = (state) => events.find((e) => e.type === 'workflow.changed' && e.state === state)?.at;
    const start = at('IMPLEMENTATION');
    const end = at('QA');
    if (!start || !end)
      throw new Error(
        `--parallel ${parallel}: no IMPLEMENTATION→QA (exit ${run.status}):\n${run.stdout.slice(-2000)}${run.stderr}`,
      );
    const content = FILES.map((f) => readFileSync(join(root, f), 'utf8')).join('');
    const cpu = JSON.parse(readFileSync(cpuFile, 'utf8'));
    return {
      implementationMs: Date.parse(end) - Date.parse(start),
      runnerCpuMs: (cpu.user + cpu.system) / 1000,
      content,
    };
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

const one = runOnce(1);
const four = runOnce(4);
if (one.content !== four.content) throw new Error('N=1 and N=4 ended on different trees');
const s = (ms) => `${(ms / 1000).toFixed(1)} s`;
console.log(`parallel lanes: 4 independent tasks, scripted model ${CALL_MS} ms per call (2 calls per task)`);
console.log(
  `  N=1  IMPLEMENTATION ${s(one.implementationMs)}  runner CPU ${s(one.runnerCpuMs)} (${s(one.runnerCpuMs / 4)} per task)`,
);
console.log(
  `  N=4  IMPLEMENTATION ${s(four.implementationMs)}  runner CPU ${s(four.runnerCpuMs)} (${s(four.runnerCpuMs / 4)} per lane)`,
);
console.log(`  speed-up ${(one.implementationMs / four.implementationMs).toFixed(2)}x; same final tree`);
