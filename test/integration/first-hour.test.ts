import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { killProcessesOf } from '../support/host-pid.js';
import { BUILDER_OK, builderWrites, TestProject, task, unsandboxed } from '../support/project.js';

// Issue 21: the first hour on a real project. Real repositories, the real CLI, the fake claude.

let project: TestProject;
/** Two real ticks and a recovery through the CLI: minutes on a loaded 2-core machine, never a wait. */
const SLOW = 240_000;
afterEach(() => project?.dispose());

/** A linter that caches into node_modules/.cache on every run (as xo/eslint --cache do) and fails on "bad". */
const LINT = `import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
mkdirSync('node_modules/.cache/lint', { recursive: true });
writeFileSync('node_modules/.cache/lint/cache.json', JSON.stringify({ at: process.hrtime.bigint().toString(), pad: 'x'.repeat(Math.floor(Math.random() * 50)) }));
if (readFileSync('src/a.ts', 'utf8').includes('bad')) { console.error('lint: bad'); process.exit(1); }
`;

/** `sandboxOff`: for a builder that writes where the sandbox would refuse it, to prove the judge. */
function lintProject(sandboxOff = false): TestProject {
  const p = TestProject.create(
    { 'src/a.ts': 'export const a = 1;\n', 'lint.mjs': LINT, '.gitignore': 'node_modules/\n' },
    (config) => {
      config.verification.templates.push({ id: 'lint', cmd: 'node', args: ['lint.mjs'] });
      // A check writes only its task's paths plus these: the cache folder `relais init` names
      // for a package (default-config.ts), as this project's user would have it.
      config.sandbox.verification_writable = ['node_modules/.cache/**'];
      if (sandboxOff)
        unsandboxed('the builder writes where the sandbox would refuse it: the judge is under test')(config);
    },
  );
  // The cache exists before the tick (the user ran the linter once): the tick's run changes it.
  p.write('node_modules/.cache/lint/cache.json', '{"at":"0"}');
  p.write('node_modules/dep/index.js', 'module.exports = 1;\n');
  return p;
}

const lintTask = (id: string) => task({ task_id: id, verification: { fast: ['lint'], slow: [] } });

describe('a red test stays an ordinary verify failure', () => {
  it(
    'a linter caching into node_modules/.cache: STOP_VERIFY_FAILED_FAST, rolled back clean, the next tick runs',
    () => {
      project = lintProject();
      const base = project.head();
      project.scenario({
        orchestrator: [{ result_json: lintTask('T1') }, { result_json: lintTask('T2') }],
        builder: [
          builderWrites({ 'src/a.ts': 'export const a = "bad";\n' }),
          builderWrites({ 'src/a.ts': 'export const a = 2;\n' }),
        ],
      });
      const red = project.cliSync(['run']);
      expect(red.code, red.stdout).toBe(1);
      const report = project.report();
      expect(report.code).toBe('STOP_VERIFY_FAILED_FAST');
      expect(report.rollback).toMatchObject({ performed: true, clean: true });
      expect(report.rollback.notes.join('\n')).toContain("runner's own verification");
      expect(project.exists('relais/INFLIGHT.json')).toBe(false);
      expect(project.head()).toBe(base);
      expect(project.read('src/a.ts')).toBe('export const a = 1;\n');
      expect(project.read('node_modules/dep/index.js')).toBe('module.exports = 1;\n');
      expect(project.status()).toBe('');

      const preflight = project.cliSync(['status', '--preflight']);
      expect(preflight.code, preflight.stdout).toBe(0);
      const green = project.cliSync(['run']);
      expect(green.code, green.stdout).toBe(0);
      expect(project.report().code).toBe('SUCCESS');
      expect(project.git('rev-parse', 'HEAD~1').trim()).toBe(base);
    },
    SLOW,
  );

  it(
    'an ignored file the builder changed still counts, even when verification touches it too',
    () => {
      // The builder writes node_modules/, out of its scope: the sandbox would refuse it first.
      project = lintProject(true);
      project.scenario({
        orchestrator: [{ result_json: lintTask('T1') }],
        builder: [builderWrites({ 'src/a.ts': 'bad\n', 'node_modules/.cache/lint/cache.json': 'planted' })],
      });
      project.cliSync(['run']);
      // The builder's write to an ignored file without a kept copy is not the runner's cache.
      expect(project.report().code).not.toBe('SUCCESS');
      expect(project.report().scope.touched_paths).toContain('node_modules/.cache/lint/cache.json');
    },
    SLOW,
  );
});

describe('recovery never moves the user commits', () => {
  it(
    'killed during verification (builder ended), the user commits a fix: the commit stays, leftovers are moved aside and said',
    async () => {
      project = TestProject.create({ 'src/a.ts': 'a\n', 'README.md': 'r\n' }, (config) => {
        config.verification.templates.push({
          id: 'hang',
          cmd: 'node',
          args: ['-e', 'console.log("verifying"); setInterval(() => {}, 1000)'],
        });
      });
      const base = project.head();
      project.scenario({
        orchestrator: [
          { result_json: task({ verification: { fast: ['hang'], slow: [] } }) },
          { result_json: task({ task_id: 'T2' }) },
        ],
        builder: [
          builderWrites({ 'src/a.ts': 'from the builder\n' }),
          builderWrites({ 'src/a.ts': 'next\n' }),
        ],
      });
      const cli = project.cli(['run']);
      await cli.waitFor('Verify hang');
      cli.signal('SIGKILL');
      const killed = await cli.done;
      const runId = /relais run (\S+) in/.exec(killed.stdout)?.[1] as string;
      const inflight = project.json('relais/INFLIGHT.json');
      expect(inflight.tick_head).toBe(base);
      // The verification process was orphaned by SIGKILL (issue 14's sandbox ends it); end it here.
      for (const pid of findVerifyPids(project.root)) process.kill(pid, 'SIGKILL');

      // The user commits their own fix on top, with the builder's edit still in the tree.
      project.write('README.md', 'user fix\n');
      project.git('commit', '-qm', 'user: fix readme', 'README.md');
      const mine = project.head();

      const status = project.cliSync(['status', '--preflight']);
      expect(status.code, status.stdout).toBe(0);
      expect(status.stdout).toContain(`leaves the branch at ${mine.slice(0, 12)} with your 1 commit(s)`);

      const next = project.cliSync(['run']);
      expect(next.code, next.stdout).toBe(0);
      expect(next.stdout).toContain(`relais/recovered/${runId}/worktree.patch`);
      const report = project.report();
      expect(report.code).toBe('SUCCESS');
      // The report agrees with the repository: its base is the user's commit, which stays on the branch.
      expect(report.base_commit).toBe(mine);
      expect(project.git('rev-parse', 'HEAD~1').trim()).toBe(mine);
      expect(project.read('README.md')).toBe('user fix\n');
      expect(project.read(`relais/recovered/${runId}/worktree.patch`)).toContain('+from the builder');
      expect(report.rollback.notes.join('\n')).toContain(`stays at ${mine.slice(0, 12)}`);
      const after = project.cliSync(['status']);
      expect(after.stdout).toContain(`kept aside by a recovery: files in relais/recovered/${runId}/`);
    },
    SLOW,
  );

  it(
    "killed during verification after its builder committed: the tick's head on record is the builder's commit, as the judge read it",
    async () => {
      project = TestProject.create({ 'src/a.ts': 'a\n' }, (config) => {
        config.verification.templates.push({
          id: 'hang',
          cmd: 'node',
          args: ['-e', 'console.log("verifying"); setInterval(() => {}, 1000)'],
        });
        unsandboxed('the builder commits, which the sandbox refuses (.git is read-only there)')(config);
      });
      const base = project.head();
      project.scenario({
        orchestrator: [{ result_json: task({ verification: { fast: ['hang'], slow: [] } }) }],
        builder: [
          {
            actions: [
              { write: 'src/a.ts', content: 'from the builder\n' },
              { exec: ['git', 'commit', '-qam', 'builder commit'] },
            ],
            result_json: BUILDER_OK,
          },
        ],
      });
      const cli = project.cli(['run']);
      await cli.waitFor('Verify hang');
      const built = project.head();
      cli.signal('SIGKILL');
      await cli.done;
      for (const pid of findVerifyPids(project.root)) process.kill(pid, 'SIGKILL');
      expect(built).not.toBe(base);
      expect(project.git('log', '-1', '--format=%s').trim()).toBe('builder commit');
      // Commits above this point are someone else's; this one is the tick's to take back.
      expect(project.json('relais/INFLIGHT.json').tick_head).toBe(built);
    },
    SLOW,
  );

  it(
    'SIGKILL mid-build then a user commit: status --preflight and run both block and ask; nothing leaves the branch',
    async () => {
      project = TestProject.create({ 'src/a.ts': 'a\n' });
      project.scenario({
        orchestrator: [{ result_json: task() }, { result_json: task({ task_id: 'T2' }) }],
        builder: [{ say: 'busy', hang: true }, builderWrites({ 'src/a.ts': 'b\n' })],
      });
      const cli = project.cli(['run']);
      await cli.waitFor('builder: busy');
      cli.signal('SIGKILL');
      await cli.done;
      killProcessesOf(project.scenarioPath);
      project.write('fix.md', 'mine\n');
      project.git('add', 'fix.md');
      project.git('commit', '-qm', 'user: my fix');
      const mine = project.head();

      const preflight = project.cliSync(['status', '--preflight', '--json']);
      expect(preflight.code).toBe(3);
      const verdict = JSON.parse(preflight.stdout).preflight;
      const run = project.cliSync(['run']);
      expect(run.code).toBe(3);
      expect(project.report().code).toBe(verdict.code);
      expect(project.report().detail).toBe(verdict.detail);
      expect(verdict.code).toBe('BLOCKED_CRASH_RECOVERY_REQUIRED');
      expect(project.json('relais/BLOCKED.json').detail).toContain('user: my fix');
      expect(project.head()).toBe(mine);
      expect(project.git('for-each-ref', 'refs/relais/')).toBe('');
      // The report agrees with the repository: it names the branch as it is, the user's commit.
      expect(project.report().head_commit).toBe(mine);
    },
    SLOW,
  );
});

describe('rollback truth (issue 14)', () => {
  it(
    'garbage in .git/refs/heads/main: the rollback repairs the ref and says so; the next tick runs',
    () => {
      project = TestProject.create({ 'src/a.ts': 'a\n' }, (config) => {
        unsandboxed('the builder writes into .git/, which the sandbox refuses: the judge is under test')(
          config,
        );
      });
      const base = project.head();
      project.scenario({
        orchestrator: [{ result_json: task() }, { result_json: task({ task_id: 'T2' }) }],
        builder: [
          builderWrites({ 'src/a.ts': 'x\n', '.git/refs/heads/main': 'garbage\n' }),
          builderWrites({ 'src/a.ts': 'y\n' }),
        ],
      });
      const first = project.cliSync(['run']);
      expect(first.code, first.stdout).toBe(1);
      const report = project.report();
      expect(report.rollback.clean).toBe(true);
      // Restored by the STOP's refs guard (or, failing that, rewritten by the rollback): said either way.
      expect(report.rollback.notes.join('\n')).toMatch(/refs\/heads\/main/);
      expect(project.head()).toBe(base);
      expect(project.exists('relais/INFLIGHT.json')).toBe(false);
      expect(project.cliSync(['run']).code).toBe(0);
    },
    SLOW,
  );

  it(
    'an interrupted run whose branch ref holds garbage: the next run says exactly what to do, and recovers once done',
    async () => {
      project = TestProject.create({ 'src/a.ts': 'a\n' });
      const base = project.head();
      project.scenario({
        orchestrator: [{ result_json: task() }, { result_json: task({ task_id: 'T2' }) }],
        builder: [{ say: 'busy', hang: true }, builderWrites({ 'src/a.ts': 'b\n' })],
      });
      const cli = project.cli(['run']);
      await cli.waitFor('builder: busy');
      cli.signal('SIGKILL');
      await cli.done;
      killProcessesOf(project.scenarioPath);
      writeFileSync(join(project.root, '.git/refs/heads/main'), 'garbage\n');
      const blocked = project.cliSync(['run']);
      expect(blocked.code).toBe(3);
      expect(blocked.stdout).toContain('BLOCKED_CRASH_RECOVERY_REQUIRED');
      expect(blocked.stdout).not.toContain('initial commit');
      const command = /Put it back with: (.*?)\. Then/.exec(blocked.stdout)?.[1] as string;
      expect(command).toContain(`git update-ref refs/heads/main ${base}`);
      const done = project.cliSync(['status']); // status does not crash on the broken ref either
      expect(done.stdout).toContain('git update-ref');
      const shell = spawnSync('sh', ['-c', command], { cwd: project.root });
      expect(shell.status).toBe(0);
      expect(project.cliSync(['run']).code).toBe(0);
      expect(project.report().base_commit).toBe(base);
    },
    SLOW,
  );
});

describe('the config fence', () => {
  it(
    'a task whose scope the config excludes is refused before the builder runs, and the fix points at the config',
    () => {
      project = TestProject.create({ 'src/a.ts': 'a\n', 'index.js': 'x\n' });
      project.scenario({
        orchestrator: [
          {
            result_json: task({
              scope: {
                allowed_globs: ['index.js'],
                forbidden_globs: [],
                allow_new_files: false,
                allow_lockfile_changes: false,
              },
            }),
          },
        ],
        builder: [builderWrites({ 'index.js': 'y\n' })],
      });
      const run = project.cliSync(['run']);
      expect(run.code).toBe(1);
      expect(project.report().code).toBe('STOP_SCOPE_OUTSIDE_CONFIG');
      expect(project.report().detail).toContain('effective fence: task [index.js] ∩ config [src/**');
      expect(run.stdout).toContain('scope.default_allowed_globs');
      expect(project.calls().map((c) => c.role)).not.toContain('builder');
      expect(project.state().budgets.builder_calls).toBe(0);
    },
    SLOW,
  );
});

function findVerifyPids(root: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      const cwd = readlinkSync(`/proc/${name}/cwd`);
      if (cmd.includes('setInterval') && cwd === root) pids.push(Number(name));
    } catch {}
  }
  return pids;
}
