import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSetup } from '../../source/engine/session/preflight.js';
import { BUILDER_OK, TestProject, task } from '../support/project.js';
import { expectStopHeld, sh, snapshotRepo } from './aftermath.js';

// The red team, hostile environment: a PATH that names folders of the repository. Many JS
// developers put `node_modules/.bin` on their PATH (relative), or have direnv put
// `$PWD/node_modules/.bin` there (absolute). A builder or a verification can write in that folder;
// the runner then starts its own tools (git, bwrap) outside any sandbox. Each attack plants a
// program of that name that leaves a mark outside the sandbox's writable folders and then does
// the real tool's job, so nothing else gives it away.

let project: TestProject;
afterEach(() => project?.dispose());

const REAL_GIT = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
const REAL_BWRAP = execFileSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).trim();

/** A shell command that plants `name` in `dir` (repo-relative): it marks `mark`, then runs `real`. */
function plant(dir: string, name: string, mark: string, real: string): string {
  const program = `#!/bin/sh\necho "$0 $*" >> ${mark}\nexec ${real} "$@"\n`;
  return `mkdir -p ${dir} && printf '%s' '${program.replace(/'/g, `'\\''`)}' > ${dir}/${name} && chmod +x ${dir}/${name}`;
}

const rootScope = {
  allowed_globs: ['src/**', 'README.md'],
  forbidden_globs: [],
  allow_new_files: true,
  allow_lockfile_changes: false,
};

describe('red team: PATH entries inside the repository never reach the runner', () => {
  it('a builder plants node_modules/.bin/git (relative PATH entry): the judge never runs it', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n', 'README.md': 'readme\n' });
    const mark = join(project.base, 'planted-git-ran');
    const was = snapshotRepo(project);
    project.scenario({
      orchestrator: [{ result_json: task({ scope: rootScope }) }],
      builder: [
        {
          actions: [
            { write: 'src/a.ts', content: 'b\n' },
            sh(plant('node_modules/.bin', 'git', mark, REAL_GIT)),
          ],
          result_json: BUILDER_OK,
        },
      ],
    });
    const run = project.cliSync(['run'], { PATH: `node_modules/.bin${delimiter}${process.env.PATH}` });
    // The planted file is out of scope: the judge stops and removes it, with its own git.
    expect(existsSync(mark), 'the runner ran the builder-planted git outside the sandbox').toBe(false);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(project.report().sandbox).toBe('bwrap');
    expectStopHeld(project, was, 'STOP_SCOPE_VIOLATION_FORBIDDEN');
  });

  it('a verification plants git in a PATH folder named by its absolute path (direnv): never run after VERIFY', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' }, (c) => {
      // The user lets the checks write the whole tree ("sandbox.verification_writable": ["**"], as
      // every check could before the writable set followed the task): the judge is under test.
      c.sandbox.verification_writable = ['**'];
      c.verification.templates.push({
        id: 'plant',
        cmd: 'sh',
        args: [
          '-c',
          plant('.direnv/bin', 'git', join(c.sandbox.writable_outside[0], '..', 'planted-git-ran'), REAL_GIT),
        ],
      });
    });
    const mark = join(project.base, 'planted-git-ran');
    project.scenario({
      orchestrator: [{ result_json: task({ verification: { fast: ['plant', 'ok'], slow: [] } }) }],
      builder: [{ actions: [{ write: 'src/a.ts', content: 'b\n' }], result_json: BUILDER_OK }],
    });
    const run = project.cliSync(['run'], {
      PATH: `${join(project.root, '.direnv/bin')}${delimiter}${process.env.PATH}`,
    });
    expect(existsSync(mark), 'the runner ran the verification-planted git outside the sandbox').toBe(false);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(project.report()).toMatchObject({ code: 'SUCCESS', sandbox: 'bwrap' });
  });

  it('a bwrap planted in a PATH folder of the repository is never taken for the sandbox by the next run', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    const mark = join(project.base, 'planted-bwrap-ran');
    // What a verification (the whole tree is writable to it) or a root-scoped builder of an
    // earlier tick left in an ignored folder; ignored files outside a tick's touched set stay.
    writeFileSync(join(project.root, '.gitignore'), 'relais/\nnode_modules/\n');
    project.git('add', '.gitignore');
    project.git('commit', '-qm', 'ignore node_modules');
    mkdirSync(join(project.root, 'node_modules/.bin'), { recursive: true });
    execFileSync('sh', ['-c', plant('node_modules/.bin', 'bwrap', mark, REAL_BWRAP)], { cwd: project.root });
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [{ actions: [{ write: 'src/a.ts', content: 'b\n' }], result_json: BUILDER_OK }],
    });
    const run = project.cliSync(['run'], {
      PATH: `${join(project.root, 'node_modules/.bin')}${delimiter}${process.env.PATH}`,
    });
    expect(existsSync(mark), 'the planted bwrap was taken for the sandbox').toBe(false);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(project.report()).toMatchObject({ code: 'SUCCESS', sandbox: 'bwrap' });
  });

  it('a project in a subfolder of another repository never starts a bwrap planted elsewhere in it', async () => {
    // An outer repository that is no Relais project (a monorepo, a home folder under git), a
    // config in one of its folders, and a PATH folder of the outer repository (direnv's tools/bin).
    // A sandbox probe started from `sub/` before git named the repository's root (tried in issue
    // 17's eighth pass, beside git's reads) looked PATH up as if `sub/` were the repository and ran
    // the planted bwrap, even behind a `sub/.git` git itself skips (two reviews; reverted).
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    const mark = join(project.base, 'planted-bwrap-ran');
    mkdirSync(join(project.root, 'sub'));
    writeFileSync(join(project.root, 'sub/relais.config.json'), project.read('relais.config.json'));
    execFileSync('sh', ['-c', plant('tools/bin', 'bwrap', mark, REAL_BWRAP)], { cwd: project.root });
    const env = { ...process.env, PATH: `${join(project.root, 'tools/bin')}${delimiter}${process.env.PATH}` };
    const setup = await loadSetup(join(project.root, 'sub'), env);
    expect(existsSync(mark), 'the planted bwrap ran outside the sandbox').toBe(false);
    expect(setup.ok).toBe(false);
    // An empty `.git` folder there is no repository to git, which goes on to the outer one.
    mkdirSync(join(project.root, 'sub/.git'));
    expect((await loadSetup(join(project.root, 'sub'), env)).ok).toBe(false);
    expect(existsSync(mark), 'the planted bwrap ran outside the sandbox').toBe(false);
    // From the repository's root the probe skips the repository's own PATH folder: the real bwrap.
    const atRoot = await loadSetup(project.root, env);
    expect(existsSync(mark), 'the planted bwrap ran outside the sandbox').toBe(false);
    expect(atRoot.ok && atRoot.setup.sandbox.kind === 'bwrap' && atRoot.setup.sandbox.bwrap).toBe(REAL_BWRAP);
  });
});
