import { linkSync, lstatSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BUILDER_OK, builderWrites, TestProject, task, unsandboxed } from '../support/project.js';
import { builderDoes, expectStopHeld, fsck, NEW_FILES_IN_SRC, sh, snapshotRepo } from './aftermath.js';

// Issue 14 red team, the tree: files git cannot judge by content (hard links, FIFOs, sockets)
// and a tree that changes under verification, each through the real `relais run`.

let project: TestProject;
afterEach(() => project?.dispose());

describe('red team: files git cannot see', () => {
  it('sandboxed: a hard link out of the writable folders cannot even be made (EXDEV)', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    const outside = join(project.base, 'outside.txt');
    writeFileSync(outside, 'a\n');
    builderDoes(project, [sh(`ln -f ${outside} src/a.ts`)]);
    project.cliSync(['run']);
    // `ln` failed inside the sandbox (EXDEV) and the fake carried on: the judge saw no change at
    // all, so nothing is claimed touched, and no link exists on either side.
    expect(project.report().sandbox).toBe('bwrap');
    expect(project.report().scope.touched_paths).toEqual([]);
    expect(lstatSync(join(project.root, 'src/a.ts')).nlink).toBe(1);
    expect(lstatSync(outside).nlink).toBe(1);
    expect(project.status()).toBe('');
  });

  it("sandboxed: a hard link inside the writable folder is refused by its new name, though the old name's folder did not change", () => {
    // Issue 17: inside the sandbox the judge reads files only in folders whose ctime moved. The
    // old name's folder (src/old) did not; the new name's (src/new, made by the builder) did.
    project = TestProject.create({ 'src/old/a.ts': 'a\n', 'src/b.ts': 'b\n' });
    const was = snapshotRepo(project);
    builderDoes(project, [
      { write: 'src/b.ts', content: 'c\n' },
      sh('mkdir src/new && ln src/old/a.ts src/new/a.ts'),
    ]);
    const run = project.cliSync(['run']);
    expect(run.code, run.stdout).toBe(1);
    expect(project.report().sandbox).toBe('bwrap');
    expectStopHeld(project, was, 'STOP_SCOPE_VIOLATION_FORBIDDEN');
    expect(project.report().scope.violations.join('\n')).toContain('hard link: src/new/a.ts');
    expect(project.exists('src/new/a.ts')).toBe(false);
    expect(lstatSync(join(project.root, 'src/old/a.ts')).nlink).toBe(1);
  });

  it('sandboxed: a file that already had a second name outside the repository, written in place, is refused', () => {
    // The link was made before the tick (the user's, or an earlier tool's): the build writes the
    // file in place, through the inode. Its folder's ctime does not move; the judge finds it
    // among the paths that changed (issue 17's narrowed walk). Here src/ was made less than the
    // judge's one-second margin before the tick, so the walk reads it anyway: the case that needs
    // the changed paths is `unit/unsafe-files-walk` ("a hard link made before the tick").
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    const outside = join(project.base, 'outside-alias.txt');
    linkSync(join(project.root, 'src/a.ts'), outside);
    builderDoes(project, [sh('printf "written through\\n" > src/a.ts')]);
    const run = project.cliSync(['run']);
    expect(run.code, run.stdout).toBe(1);
    expect(project.report()).toMatchObject({ sandbox: 'bwrap', code: 'STOP_SCOPE_VIOLATION_FORBIDDEN' });
    expect(project.report().scope.violations.join('\n')).toContain('hard link: src/a.ts');
    expect(project.git('log', '-1', '--format=%s')).not.toContain('relais(');
  });

  it('unsandboxed (the judge as the fence): a hard link from in-scope paths to files outside the repository is refused, and the next tick cannot write through it', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' }, (config) => {
      unsandboxed('a hard link out of the repository cannot be made in the sandbox: the judge is under test')(
        config,
      );
    });
    // Same content as src/a.ts: git sees no change at all, only the link count tells.
    const outside = join(project.base, 'outside.txt');
    const secret = join(project.base, 'secret.txt');
    writeFileSync(outside, 'a\n');
    writeFileSync(secret, 'secret\n');
    const was = snapshotRepo(project);
    project.scenario({
      orchestrator: [
        { result_json: task({ scope: NEW_FILES_IN_SRC }) },
        { result_json: task({ task_id: 'T2' }) },
      ],
      builder: [
        { actions: [sh(`ln -f ${outside} src/a.ts && ln ${secret} src/b.ts`)], result_json: BUILDER_OK },
        builderWrites({ 'src/a.ts': 'written by the next tick\n' }),
      ],
    });
    const first = project.cliSync(['run']);
    expect(first.code, first.stdout).toBe(1);
    expectStopHeld(project, was, 'STOP_SCOPE_VIOLATION_FORBIDDEN');
    expect(project.report().scope.violations.join('\n')).toContain('hard link: src/a.ts');
    expect(project.report().scope.violations.join('\n')).toContain('hard link: src/b.ts');
    expect(lstatSync(join(project.root, 'src/a.ts')).nlink).toBe(1);
    const second = project.cliSync(['run']);
    expect(second.code, second.stdout).toBe(0);
    expect(project.read('src/a.ts')).toBe('written by the next tick\n');
    expect(readFileSync(outside, 'utf8')).toBe('a\n');
    expect(readFileSync(secret, 'utf8')).toBe('secret\n');
  });

  it('a FIFO and a socket left in the tree by an otherwise good builder are refused and removed', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    const was = snapshotRepo(project);
    builderDoes(project, [
      { write: 'src/a.ts', content: 'b\n' },
      sh('mkfifo src/pipe'),
      {
        exec: [
          process.execPath,
          '-e',
          "require('net').createServer().listen('src/sock', () => process.exit(0))",
        ],
      },
    ]);
    const run = project.cliSync(['run']);
    expect(run.code, run.stdout).toBe(1);
    expectStopHeld(project, was, 'STOP_SCOPE_VIOLATION_FORBIDDEN');
    const violations = project.report().scope.violations.join('\n');
    expect(violations).toContain('FIFO in the tree: src/pipe');
    expect(violations).toContain('socket in the tree: src/sock');
    expect(project.exists('src/pipe')).toBe(false);
    expect(project.exists('src/sock')).toBe(false);
  });

  it('a FIFO made by verification on the success path is refused (checked again after VERIFY)', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' }, (config) => {
      config.verification.templates.push({ id: 'pipe', cmd: 'mkfifo', args: ['src/vpipe'] });
    });
    const was = snapshotRepo(project);
    project.scenario({
      orchestrator: [{ result_json: task({ verification: { fast: ['pipe'], slow: [] } }) }],
      builder: [builderWrites({ 'src/a.ts': 'b\n' })],
    });
    const run = project.cliSync(['run']);
    expect(run.code, run.stdout).toBe(1);
    expectStopHeld(project, was, 'STOP_SCOPE_VIOLATION_FORBIDDEN');
    expect(project.report().detail).toContain('FIFO in the tree: src/vpipe');
    expect(project.exists('src/vpipe')).toBe(false);
  });
});

describe('red team: the verdict is about the committed tree', () => {
  // "check" passes only on good content; "swap" plays the daemon that puts good content in place
  // right before the check; "swapback" puts the judged (bad) content back right after it.
  const templates = (config: any) => {
    const write = (content: string) => `require("fs").writeFileSync("src/a.ts", ${JSON.stringify(content)})`;
    config.verification.templates.push(
      { id: 'swap', cmd: 'node', args: ['-e', write('good\n')] },
      { id: 'swapback', cmd: 'node', args: ['-e', write('bad\n')] },
      {
        id: 'check',
        cmd: 'node',
        args: ['-e', 'process.exit(require("fs").readFileSync("src/a.ts", "utf8") === "good\\n" ? 0 : 1)'],
      },
    );
  };

  for (const [name, fast] of [
    ['swapped before the check', ['swap', 'check']],
    ['swapped for the check and swapped back after it', ['swap', 'check', 'swapback']],
  ] as const) {
    it(`a file ${name} is STOP_TREE_CHANGED_DURING_VERIFY, and bad content is never committed`, () => {
      project = TestProject.create({ 'src/a.ts': 'a\n' }, templates);
      const was = snapshotRepo(project);
      project.scenario({
        orchestrator: [{ result_json: task({ verification: { fast: [...fast], slow: [] } }) }],
        builder: [builderWrites({ 'src/a.ts': 'bad\n' })],
      });
      const run = project.cliSync(['run']);
      expect(run.code, run.stdout).toBe(1);
      expectStopHeld(project, was, 'STOP_TREE_CHANGED_DURING_VERIFY');
      expect(project.report().verification.runs.map((r: any) => r.exit_code)).toEqual(fast.map(() => 0));
      expect(project.report().detail).toContain('src/a.ts');
      expect(project.read('src/a.ts')).toBe('a\n');
      expect(fsck(project).ok).toBe(true);
    });
  }
});
