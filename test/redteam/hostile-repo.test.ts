import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { builderWrites, TestProject, task } from '../support/project.js';
import { ghCalls, happyScenario, TASKS_MD, workflowProject } from '../support/workflow.js';
import { expectStopHeld, snapshotRepo } from './aftermath.js';

// The red team, hostile repository: what a cloned project holds before the first run (committed
// symlinks, a .git/config and hooks of its own). The runner is not sandboxed; what it reads and
// writes through such a repository is its own doing.

let project: TestProject | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

describe('red team: a workspace folder that is a symlink', () => {
  it('a committed relais -> ../elsewhere: relais run refuses, and nothing is written outside the repository', () => {
    const p = TestProject.create({ 'src/a.ts': 'a\n' });
    project = p;
    const elsewhere = join(p.base, 'elsewhere');
    mkdirSync(elsewhere);
    // The workspace relais init made is replaced by a link to a folder outside, as a cloned
    // repository would ship it.
    rmSync(join(p.root, 'relais'), { recursive: true, force: true });
    symlinkSync('../elsewhere', join(p.root, 'relais'));
    p.git('add', '-f', 'relais');
    p.git('commit', '-qm', 'ship a workspace link');
    p.scenario({ orchestrator: [{ result_json: task() }], builder: [builderWrites({ 'src/a.ts': 'b\n' })] });
    const run = p.cliSync(['run']);
    expect(run.code, run.stdout + run.stderr).not.toBe(0);
    expect(run.stdout + run.stderr).toContain('symbolic link');
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(p.read('src/a.ts')).toBe('a\n');
    // relais init will not build the workspace through it either.
    const init = p.cliSync(['init']);
    expect(init.code, init.stdout + init.stderr).not.toBe(0);
    expect(readdirSync(elsewhere)).toEqual([]);
  });
});

describe('red team: the workflow documents, linked out of the repository', () => {
  const SECRET = 'SECRET-private-key-line';
  for (const [name, link] of [
    ['specs/QA_REPORT.md is a link to a private file', 'file'],
    ['specs/ is a link to a folder outside', 'folder'],
  ] as const) {
    it(`${name}: a QA agent that writes nothing gets none of it into the gate, the output or the pull request`, async () => {
      const p = workflowProject();
      project = p;
      const outside = join(p.base, 'outside');
      mkdirSync(outside);
      writeFileSync(join(outside, 'QA_REPORT.md'), `## Summary\n${SECRET}\n`);
      if (link === 'file') {
        mkdirSync(join(p.root, 'specs'));
        symlinkSync(join(outside, 'QA_REPORT.md'), join(p.root, 'specs/QA_REPORT.md'));
      } else {
        // The whole folder: the spec and tasks the repository ships are there too.
        writeFileSync(join(outside, 'SPEC.md'), '# Spec\n\nTwo functions: greet and bye.\n');
        writeFileSync(join(outside, 'TASKS.md'), TASKS_MD);
        symlinkSync(outside, join(p.root, 'specs'));
      }
      p.git('add', 'specs');
      p.git('commit', '-qm', 'ship the QA report as a link');
      const scenario = happyScenario();
      // The spec agent writes beside the link (the folder variant: nothing, the files are there);
      // the QA agent says it is done and writes nothing.
      if (link === 'folder') scenario.spec = [{ result: 'Specs are written.\nEXIT_SIGNAL: true' }];
      scenario.qa = [{ result: 'The report is in specs/QA_REPORT.md.\nEXIT_SIGNAL: true' }];
      p.scenario(scenario);
      const gh = p.json('relais.config.json').pr.gh_command as string;
      const run = await p.cli(['start', '--yes'], {
        env: { IS_SANDBOX: '1', PATH: `${dirname(gh)}${delimiter}${process.env.PATH}` },
      }).done;
      expect(run.stdout + run.stderr).not.toContain(SECRET);
      for (const call of ghCalls(p)) {
        const body = call[call.indexOf('--body-file') + 1];
        if (body) expect(readFileSync(body, 'utf8')).not.toContain(SECRET);
      }
      if (existsSync(join(p.root, 'relais/PR_BODY.md')))
        expect(p.read('relais/PR_BODY.md')).not.toContain(SECRET);
      for (const call of p.calls()) expect(call.prompt).not.toContain(SECRET);
      expect(readFileSync(join(outside, 'QA_REPORT.md'), 'utf8')).toBe(`## Summary\n${SECRET}\n`);
    });
  }
});

describe("red team: the repository's own .git", () => {
  it('core.worktree pointing at another folder: the run refuses and that folder is untouched', () => {
    const p = TestProject.create({ 'src/a.ts': 'a\n' });
    project = p;
    const victim = join(p.base, 'victim');
    mkdirSync(join(victim, 'src'), { recursive: true });
    writeFileSync(join(victim, 'src/a.ts'), 'the victim keeps this\n');
    writeFileSync(join(victim, 'precious.txt'), 'untracked and precious\n');
    p.git('config', 'core.worktree', victim);
    p.scenario({ orchestrator: [{ result_json: task() }], builder: [builderWrites({ 'src/a.ts': 'b\n' })] });
    const run = p.cliSync(['run']);
    expect(run.code, run.stdout + run.stderr).not.toBe(0);
    expect(p.calls()).toEqual([]);
    expect(readFileSync(join(victim, 'src/a.ts'), 'utf8')).toBe('the victim keeps this\n');
    expect(readFileSync(join(victim, 'precious.txt'), 'utf8')).toBe('untracked and precious\n');
    expect(readdirSync(victim).sort()).toEqual(['precious.txt', 'src']);
  });

  it('every hook the repository ships (reference-transaction, post-index-change, pre-commit...) never runs, on SUCCESS or on STOP', () => {
    const p = TestProject.create({ 'src/a.ts': 'a\n', 'README.md': 'readme\n' });
    project = p;
    const ran = join(p.base, 'hooks-ran');
    const hooks = [
      'reference-transaction',
      'post-index-change',
      'pre-commit',
      'prepare-commit-msg',
      'commit-msg',
      'post-commit',
      'post-checkout',
      'post-merge',
      'post-rewrite',
      'pre-auto-gc',
      'pre-push',
      'fsmonitor-watchman',
    ];
    for (const hook of hooks) {
      const path = join(p.root, '.git/hooks', hook);
      writeFileSync(path, `#!/bin/sh\necho ${hook} >> ${ran}\n`, { mode: 0o755 });
    }
    p.scenario({
      orchestrator: [
        { result_json: task() },
        { result_json: task({ task_id: 'T2', verification: { fast: ['fail'], slow: [] } }) },
      ],
      builder: [builderWrites({ 'src/a.ts': 'b\n' }), builderWrites({ 'src/a.ts': 'c\n' })],
    });
    // Read right after each run: the test's own git (status) would run post-index-change itself.
    const hooksRan = () => (existsSync(ran) ? readFileSync(ran, 'utf8') : '');
    const ok = p.cliSync(['run']);
    expect(hooksRan()).toBe('');
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(p.report().code).toBe('SUCCESS');
    const was = snapshotRepo(p);
    const stop = p.cliSync(['run']);
    expect(hooksRan()).toBe('');
    expect(stop.code, stop.stdout + stop.stderr).toBe(1);
    expectStopHeld(p, was, 'STOP_VERIFY_FAILED_FAST');
    // Not vacuous: the user's own commit runs them.
    p.git('commit', '-q', '--allow-empty', '-m', 'the user commits');
    expect(hooksRan()).toMatch(/pre-commit[\s\S]*reference-transaction/);
  });
});
