import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { survivorsOf } from '../support/host-pid.js';
import { REPO_ROOT, TestProject, task, unsandboxed } from '../support/project.js';

// Seed 001 PR4 (patch builder) and PR5 (external "cursor" driver), through the real `relais run`.

let project: TestProject;
afterEach(() => project?.dispose());

const files = { 'src/a.ts': 'export const a = 1;\n', 'README.md': 'readme\n' };
const patchTask = (patch: string, scope: Record<string, unknown> = {}) =>
  task({
    scope: {
      allowed_globs: ['src/**'],
      forbidden_globs: [],
      allow_new_files: false,
      allow_lockfile_changes: false,
      ...scope,
    },
    builder: { mode: 'patch', max_turns: 1, instructions: 'apply the patch', patch },
  });
const hunk = '@@ -1 +1 @@\n-export const a = 1;\n+export const a = 2;\n';

describe('patch builder (PR4)', () => {
  it('applies a valid patch with git, then judges, verifies and commits it like any build', () => {
    project = TestProject.create(files);
    project.scenario({
      orchestrator: [
        {
          result_json: patchTask(`diff --git a/src/a.ts b/src/a.ts\n--- a/src/a.ts\n+++ b/src/a.ts\n${hunk}`),
        },
      ],
    });
    const run = project.cliSync(['run']);
    expect(run.code, run.stdout).toBe(0);
    expect(project.read('src/a.ts')).toBe('export const a = 2;\n');
    expect(project.report()).toMatchObject({
      code: 'SUCCESS',
      agents: { builder: { calls: 1, summary: 'applied the task patch (1 path(s))' } },
    });
    expect(project.state().budgets).toMatchObject({ builder_calls: 1, patch_attempts: 1 });
    expect(project.calls().map((c) => c.role)).toEqual(['orchestrator']);
  });

  it('in the sandbox: git apply runs inside bubblewrap, writable only in the task folders, and the patch lands', () => {
    project = TestProject.create(files);
    project.scenario({
      orchestrator: [
        {
          result_json: patchTask(`diff --git a/src/a.ts b/src/a.ts\n--- a/src/a.ts\n+++ b/src/a.ts\n${hunk}`),
        },
      ],
    });
    const run = project.cliSync(['run']);
    expect(run.code, run.stdout).toBe(0);
    expect(project.read('src/a.ts')).toBe('export const a = 2;\n');
    expect(project.report()).toMatchObject({ code: 'SUCCESS', sandbox: 'bwrap' });
    expect(project.status()).toBe('');
  });

  it('refuses a patch naming b/../../evil before git runs (seed 001 acceptance 3)', () => {
    project = TestProject.create(files);
    project.scenario({
      orchestrator: [{ result_json: patchTask(`--- a/src/a.ts\n+++ b/../../evil\n@@ -0,0 +1 @@\n+evil\n`) }],
    });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(1);
    expect(project.report().code).toBe('STOP_PATCH_INVALID');
    expect(project.report().detail).toContain(
      'patch refused before it was applied: "../../evil": contains ".."',
    );
    expect(existsSync(join(project.root, '../../evil'))).toBe(false);
    expect(project.status()).toBe('');
  });

  const corpus: Array<[string, string, string, Record<string, unknown>?]> = [
    [
      'traversal in diff --git',
      `diff --git a/src/a.ts b/../evil\n--- a/src/a.ts\n+++ b/src/a.ts\n${hunk}`,
      'STOP_PATCH_INVALID',
    ],
    [
      'traversal in rename to',
      'diff --git a/src/a.ts b/src/b.ts\nsimilarity index 100%\nrename from src/a.ts\nrename to ../evil.ts\n',
      'STOP_PATCH_INVALID',
    ],
    [
      'traversal in copy from',
      'diff --git a/x b/src/p.ts\nsimilarity index 100%\ncopy from ../../etc/passwd\ncopy to src/p.ts\n',
      'STOP_PATCH_INVALID',
    ],
    [
      'an absolute path',
      'diff --git a/src/a.ts b/src/a.ts\nsimilarity index 100%\nrename from src/a.ts\nrename to /tmp/evil.ts\n',
      'STOP_PATCH_INVALID',
    ],
    [
      'a quoted path with an escaped traversal',
      `diff --git "a/src/a.ts" "b/\\056\\056/evil"\n--- a/src/a.ts\n+++ "b/\\056\\056/evil"\n${hunk}`,
      'STOP_PATCH_INVALID',
    ],
    ['a NUL byte', `--- a/src/a.ts\n+++ b/src/a\u0000.ts\n${hunk}`, 'STOP_PATCH_INVALID'],
    [
      'a symlinked parent folder',
      '--- /dev/null\n+++ b/src/lnk/x.ts\n@@ -0,0 +1 @@\n+x\n',
      'STOP_PATCH_INVALID',
      { allow_new_files: true },
    ],
    [
      'a binary patch',
      'diff --git a/src/a.ts b/src/a.ts\nindex 1..2 100644\nGIT binary patch\nliteral 3\nKcmZ?b\n\n',
      'STOP_PATCH_INVALID',
    ],
    [
      'a symlink creation',
      'diff --git a/src/l b/src/l\nnew file mode 120000\n--- /dev/null\n+++ b/src/l\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n',
      'STOP_PATCH_INVALID',
      { allow_new_files: true },
    ],
    [
      'a runner-owned target',
      `--- a/relais/STATE.json\n+++ b/relais/STATE.json\n${hunk}`,
      'STOP_RUNNER_OWNED_MUTATION',
    ],
    [
      'a forbidden target (.git/config)',
      `--- a/.git/config\n+++ b/.git/config\n${hunk}`,
      'STOP_SCOPE_VIOLATION_FORBIDDEN',
    ],
    [
      'a path outside the allowed globs',
      `--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-readme\n+pwned\n`,
      'STOP_SCOPE_VIOLATION_OUTSIDE_ALLOWED',
    ],
    [
      'a new file when new files are forbidden',
      '--- /dev/null\n+++ b/src/new.ts\n@@ -0,0 +1 @@\n+new\n',
      'STOP_SCOPE_VIOLATION_NEW_FILE',
    ],
    [
      'the short binary form "Files … differ"',
      'diff --git a/src/c.ts b/src/c.ts\nnew file mode 100644\nindex 0000000..e69de29\nFiles /dev/null and b/src/c.ts differ\n',
      'STOP_PATCH_INVALID',
      { allow_new_files: true },
    ],
    [
      'a symlink mode spelled 0120000',
      'diff --git a/src/l b/src/l\nnew file mode 0120000\n--- /dev/null\n+++ b/src/l\n@@ -0,0 +1 @@\n+../relais.config.json\n',
      'STOP_PATCH_INVALID',
      { allow_new_files: true },
    ],
    [
      'rename old/new reaching an ignored .env',
      'diff --git a/.env b/src/b.txt\nsimilarity index 100%\nrename old .env\nrename new src/b.txt\n',
      'STOP_SCOPE_VIOLATION_FORBIDDEN',
      { allow_new_files: true },
    ],
    [
      'a new file created by a hunk without /dev/null',
      '--- a/src/n.ts\n+++ b/src/n.ts\n@@ -0,0 +1 @@\n+new\n',
      'STOP_SCOPE_VIOLATION_NEW_FILE',
    ],
    [
      'an unknown header line',
      `diff --git a/src/a.ts b/src/a.ts\nsomething git might read\n--- a/src/a.ts\n+++ b/src/a.ts\n${hunk}`,
      'STOP_PATCH_INVALID',
    ],
    [
      'a header line after a hunk',
      `diff --git a/src/a.ts b/src/a.ts\n--- a/src/a.ts\n+++ b/src/a.ts\n${hunk}rename to ../x\n`,
      'STOP_PATCH_INVALID',
    ],
    [
      'a patch whose context does not match',
      '--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1 @@\n-not what is there\n+x\n',
      'STOP_PATCH_INVALID',
    ],
  ];

  it.each(corpus)('refuses %s with the right code and writes nothing', (_name, patch, code, scope) => {
    project = TestProject.create(files);
    mkdirSync(join(project.base, 'outside'));
    symlinkSync(join(project.base, 'outside'), join(project.root, 'src/lnk'));
    project.git('add', '-A');
    project.git('commit', '-qm', 'symlinked folder');
    const head = project.head();
    project.scenario({ orchestrator: [{ result_json: patchTask(patch, scope) }] });
    const run = project.cliSync(['run']);
    expect(run.code, run.stdout).toBe(1);
    expect(project.report().code).toBe(code);
    expect(project.status()).toBe('');
    expect(project.head()).toBe(head);
    expect(project.read('src/a.ts')).toBe('export const a = 1;\n');
    expect(readFileSync(join(project.root, 'README.md'), 'utf8')).toBe('readme\n');
    expect(existsSync(join(project.base, 'outside/x.ts'))).toBe(false);
    expect(existsSync(join(project.root, '../evil.ts')) || existsSync('/tmp/evil.ts')).toBe(false);
  });

  it('patch mode disabled or out of attempts: the orchestrator is told and must use another mode', () => {
    project = TestProject.create(files);
    project.commitConfig((c) => {
      c.builder.allow_patch_mode = false;
    });
    const patch = patchTask(`--- a/src/a.ts\n+++ b/src/a.ts\n${hunk}`);
    project.scenario({ orchestrator: [{ result_json: patch }, { result_json: patch }] });
    project.cliSync(['run']);
    expect(project.report().code).toBe('BLOCKED_ORCHESTRATOR_OUTPUT_INVALID');
    expect(project.calls()[1]?.prompt).toContain('builder.mode "patch" is disabled');
  });
});

const DRIVER = join(REPO_ROOT, 'test/support/fake-driver.mjs');

function withDriver(timeout = 30, configure: (config: any) => void = () => undefined): TestProject {
  return TestProject.create(files, (c) => {
    configure(c);
    c.builder.cursor = {
      command: DRIVER,
      args: ['{{TASK_FILE}}', '{{OUTPUT_FILE}}'],
      timeout_seconds: timeout,
      output_file: 'relais/BUILDER_RESULT.json',
    };
  });
}

const cursorTask = () => task({ builder: { mode: 'cursor', max_turns: 1, instructions: 'do it' } });
const drive = (p: TestProject, plan: Record<string, unknown>) => {
  const path = join(p.harness, 'driver.json');
  writeFileSync(path, JSON.stringify(plan));
  return { RELAIS_FAKE_DRIVER: path };
};
const RESULT = { summary: 'driver did it', files_intended: ['src/a.ts'], commands_ran: [], notes: [] };

describe('external builder driver (PR5, "cursor")', () => {
  it('gets argv with the task and output files, and its edits are judged like any builder', () => {
    project = withDriver();
    project.scenario({ orchestrator: [{ result_json: cursorTask() }] });
    const env = drive(project, { writes: { 'src/a.ts': 'export const a = 3;\n' }, result: RESULT });
    const run = project.cliSync(['run'], env);
    expect(run.code, run.stdout).toBe(0);
    expect(project.report()).toMatchObject({
      code: 'SUCCESS',
      agents: { builder: { summary: 'driver did it' } },
    });
    const seen = JSON.parse(readFileSync(`${env.RELAIS_FAKE_DRIVER}.seen.json`, 'utf8'));
    expect(seen).toEqual({
      argv: [join(project.root, 'relais/TASK.json'), join(project.root, 'relais/BUILDER_RESULT.json')],
      task_id: 'T1',
      env_output: join(project.root, 'relais/BUILDER_RESULT.json'),
    });
  });

  it('an out-of-scope driver edit is refused by the sandbox before it reaches the disk', () => {
    project = withDriver();
    project.scenario({ orchestrator: [{ result_json: cursorTask() }] });
    project.cliSync(['run'], drive(project, { writes: { 'README.md': 'pwned\n' }, result: RESULT }));
    expect(project.report()).toMatchObject({
      code: 'STOP_SANDBOX_WRITE_REFUSED',
      detail: expect.stringContaining('README.md'),
    });
    expect(project.read('README.md')).toBe('readme\n');
    expect(project.status()).toBe('');
  });

  it('unsandboxed, an out-of-scope driver edit reaches the disk and the judge stops and rolls it back', () => {
    project = withDriver(30, unsandboxed('the out-of-scope write must land for the judge to be under test'));
    project.scenario({ orchestrator: [{ result_json: cursorTask() }] });
    project.cliSync(['run'], drive(project, { writes: { 'README.md': 'pwned\n' }, result: RESULT }));
    expect(project.report().code).toBe('STOP_SCOPE_VIOLATION_OUTSIDE_ALLOWED');
    expect(project.read('README.md')).toBe('readme\n');
  });

  it('a driver that sleeps past its timeout is killed with its whole tree: STOP_BUILDER_TIMEOUT (seed 001 acceptance 4)', () => {
    project = withDriver(1);
    project.scenario({ orchestrator: [{ result_json: cursorTask() }] });
    const env = drive(project, { writes: { 'src/a.ts': 'partial\n' }, sleep: true });
    const run = project.cliSync(['run'], env);
    expect(run.code).toBe(1);
    expect(project.report()).toMatchObject({
      code: 'STOP_BUILDER_TIMEOUT',
      rollback: { performed: true, clean: true },
    });
    expect(project.read('src/a.ts')).toBe('export const a = 1;\n');
    // The driver and its child both ran (it wrote their pids); none of the run's processes is alive.
    expect(readFileSync(`${env.RELAIS_FAKE_DRIVER}.pids`, 'utf8')).toMatch(/^\d+ \d+$/);
    expect(survivorsOf(project.scenarioPath)).toEqual([]);
  });

  it('a driver cannot swap its output file for a FIFO in the sandbox: the file stays regular and unwritten', () => {
    project = withDriver();
    project.scenario({ orchestrator: [{ result_json: cursorTask() }] });
    const env = drive(project, { writes: { 'src/a.ts': 'x\n' }, fifo_output: true });
    const run = project.cliSync(['run'], env);
    expect(run.code).toBe(1);
    expect(project.report()).toMatchObject({
      code: 'STOP_BUILDER_OUTPUT_INVALID',
      detail: expect.stringContaining('the driver wrote no relais/BUILDER_RESULT.json'),
    });
    expect(project.read('src/a.ts')).toBe('export const a = 1;\n');
  });

  it('unsandboxed, a FIFO left as the output file never blocks the runner', () => {
    project = withDriver(
      30,
      unsandboxed("the sandbox keeps the output a regular file: the runner's own check is under test"),
    );
    project.scenario({ orchestrator: [{ result_json: cursorTask() }] });
    const env = drive(project, { writes: { 'src/a.ts': 'x\n' }, fifo_output: true });
    const run = project.cliSync(['run'], env);
    expect(run.code).toBe(1);
    expect(project.report()).toMatchObject({
      code: 'STOP_BUILDER_OUTPUT_INVALID',
      detail: expect.stringContaining('relais/BUILDER_RESULT.json is not a regular file'),
    });
  });

  it('a result file left by an earlier tick is removed before the driver starts', () => {
    project = withDriver();
    project.write('relais/BUILDER_RESULT.json', JSON.stringify(RESULT));
    project.scenario({ orchestrator: [{ result_json: cursorTask() }] });
    project.cliSync(['run'], drive(project, { writes: { 'src/a.ts': 'x\n' } }));
    expect(project.report()).toMatchObject({
      code: 'STOP_BUILDER_OUTPUT_INVALID',
      detail: expect.stringContaining('the driver wrote no relais/BUILDER_RESULT.json'),
    });
  });

  it.each([
    [{ command: 'driver --fast', args: [] }, 'builder.cursor.command'],
    [{ command: 'bash', args: ['-c', 'node driver.js'] }, 'a shell with -c is a shell string in disguise'],
    [{ command: '/bin/sh', args: ['-ec', 'x'] }, 'a shell with -c is a shell string in disguise'],
    [{ command: DRIVER, args: [], output_file: 'out/result.json' }, 'must be inside the workspace'],
  ])('config validation refuses a driver given as a shell string: %j', (driver, message) => {
    project = TestProject.create(files);
    project.commitConfig((c) => {
      c.builder.cursor = { timeout_seconds: 10, output_file: 'relais/BUILDER_RESULT.json', ...driver };
    });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(3);
    expect(run.stdout).toContain(message);
  });

  it('cursor mode without a configured driver is refused to the orchestrator', () => {
    project = TestProject.create(files);
    project.scenario({ orchestrator: [{ result_json: cursorTask() }, { result_json: cursorTask() }] });
    project.cliSync(['run']);
    expect(project.report()).toMatchObject({
      code: 'BLOCKED_ORCHESTRATOR_OUTPUT_INVALID',
      detail: expect.stringContaining('needs a builder.cursor driver'),
    });
  });
});
