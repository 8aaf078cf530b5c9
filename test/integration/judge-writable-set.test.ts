import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BUILDER_OK, TestProject, task, unsandboxed } from '../support/project.js';

// Issue 17: inside the sandbox the judge's status pass and unsafe-files walk read only what the
// tick's processes could write. A task scoped to one folder of a larger tree, through the real
// `relais run`: the verdict and touched paths equal the whole-tree judge's (the same run without
// the sandbox) for every change a sandboxed builder can make, and a change made outside that
// folder by a process outside Relais during the tick is not committed and stops the next run.

let project: TestProject | undefined;
let twin: TestProject | undefined;
afterEach(() => {
  project?.dispose();
  twin?.dispose();
  project = twin = undefined;
});

const FILES: Record<string, string> = {
  '.gitignore': '*.log\n',
  'src/d0/a.ts': 'a\n',
  'src/d0/b.ts': 'b\n',
  'src/d0/c.ts': 'c\n',
  'src/d1/x.ts': 'x\n',
  'src/d2/y.ts': 'y\n',
  'lib/z.ts': 'z\n',
};

const scopedTask = task({
  scope: {
    allowed_globs: ['src/d0/**'],
    forbidden_globs: [],
    allow_new_files: true,
    allow_lockfile_changes: false,
  },
  diff_limits: { max_files_touched: 10, max_lines_changed: 100 },
});

/** Everything a sandboxed builder can do in its folder: edit, create, delete, rename, ignored. */
const BUILD = {
  actions: [
    { write: 'src/d0/a.ts', content: 'a2\n' },
    { write: 'src/d0/new.ts', content: 'n\n' },
    { delete: 'src/d0/b.ts' },
    { exec: ['mv', 'src/d0/c.ts', 'src/d0/c2.ts'] },
    { write: 'src/d0/out.log', content: 'log\n' },
  ],
  result_json: BUILDER_OK,
};

/** A `git` first on PATH that records every call's argv (NUL-separated fields), then runs git. */
function recordingGit(dir: string): { env: NodeJS.ProcessEnv; calls: () => string[][] } {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  const log = join(dir, 'git-calls');
  writeFileSync(
    join(bin, 'git'),
    `#!/bin/sh\n{ for a in "$@"; do printf '%s\\001' "$a"; done; printf '\\002'; } >> "${log}"\nexec "${real}" "$@"\n`,
  );
  chmodSync(join(bin, 'git'), 0o755);
  return {
    env: { PATH: `${bin}:${process.env.PATH}` },
    calls: () =>
      readFileSync(log, 'utf8')
        .split('\u0002')
        .filter((call) => call !== '')
        .map((call) => call.split('\u0001').slice(0, -1)),
  };
}

/** The judge's status pass: the one that lists ignored paths too. */
const judgeStatus = (calls: string[][]) => calls.filter((argv) => argv.includes('--ignored=matching'));

describe('the judge inside the sandbox reads only what the task can write', () => {
  it('judges a task scoped to one folder as the whole-tree judge does', () => {
    project = TestProject.create(FILES);
    twin = TestProject.create(
      FILES,
      unsandboxed('the same run without the sandbox is the whole-tree judge this one is compared with'),
    );
    const recorded = recordingGit(project.harness);
    for (const p of [project, twin])
      p.scenario({ orchestrator: [{ result_json: scopedTask }], builder: [BUILD] });
    const run = project.cliSync(['run'], recorded.env);
    const full = twin.cliSync(['run']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(full.code, full.stdout + full.stderr).toBe(0);

    const limited = project.report();
    const whole = twin.report();
    expect(limited.code).toBe('SUCCESS');
    expect(limited.code).toBe(whole.code);
    expect(limited.scope.touched_paths).toEqual(whole.scope.touched_paths);
    expect(limited.scope.touched_paths).toEqual([
      'src/d0/a.ts',
      'src/d0/b.ts',
      'src/d0/c.ts',
      'src/d0/c2.ts',
      'src/d0/new.ts',
      'src/d0/out.log',
    ]);
    expect(limited.blast_radius).toEqual(whole.blast_radius);
    // The same commit content either way.
    const files = (p: TestProject) => p.git('ls-tree', '-r', '--name-only', 'HEAD').trim().split('\n');
    expect(files(project)).toEqual(files(twin));
    expect(project.status()).toBe('');

    // The sandboxed judge's status pass read only the task's folder; the preflight's read the tree.
    const statuses = judgeStatus(recorded.calls());
    expect(statuses).toHaveLength(1);
    expect((statuses[0] as string[]).slice(-2)).toEqual(['--', 'src/d0/']);
    const preflight = recorded
      .calls()
      .filter((argv) => argv.includes('status') && !argv.includes('--ignored=matching'));
    expect(preflight.length).toBeGreaterThan(0);
    expect(preflight.every((argv) => !argv.includes('--'))).toBe(true);
  });

  it('leaves a change an outside process made elsewhere during the tick uncommitted, and the next run refuses the tree', async () => {
    // No verification command: the after-VERIFY guards (which read the whole tree) do not run.
    const run = await runWithOutsideWrite(task({ ...scopedTask, verification: { fast: [], slow: [] } }));
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const p = project as TestProject;

    // Not seen by this tick's judge, so never committed: the commit is the judged index.
    const report = p.report();
    expect(report.code).toBe('SUCCESS');
    expect(report.scope.touched_paths).toEqual(['src/d0/a.ts']);
    expect(p.git('show', '--name-only', '--format=', 'HEAD').trim()).toBe('src/d0/a.ts');
    expect(p.git('show', 'HEAD:src/d1/x.ts')).toBe('x\n');
    expect(p.status()).toBe(' M src/d1/x.ts\n');

    // The next preflight's full status sees it, before any agent runs.
    p.scenario({ orchestrator: [{ result_json: scopedTask }], builder: [BUILD] });
    const next = p.cliSync(['run']);
    expect(next.code).not.toBe(0);
    expect(next.stdout).toContain('BLOCKED_DIRTY_WORKTREE');
    expect(p.calls()).toEqual([]);
    expect(p.read('src/d1/x.ts')).toBe('changed from outside\n');
  });

  it('with a verification command, the whole-tree check after VERIFY still sees such a change', async () => {
    const run = await runWithOutsideWrite(scopedTask);
    expect(run.code).not.toBe(0);
    const p = project as TestProject;
    expect(p.report().code).toBe('STOP_TREE_CHANGED_DURING_VERIFY');
    expect(p.git('show', 'HEAD:src/d1/x.ts')).toBe('x\n');
  });
});

/**
 * `relais run` whose builder edits src/d0/a.ts and then waits, inside the sandbox, while the test
 * (outside it, as any process outside Relais) writes src/d1/x.ts: two FIFOs in the harness folder,
 * which the sandbox makes writable for the fake agents, hand the turn back and forth.
 */
async function runWithOutsideWrite(t: Record<string, unknown>) {
  project = TestProject.create(FILES);
  const asked = join(project.harness, 'asked');
  const done = join(project.harness, 'done');
  for (const fifo of [asked, done]) spawnSync('mkfifo', [fifo]);
  project.scenario({
    orchestrator: [{ result_json: t }],
    builder: [
      {
        actions: [
          { write: 'src/d0/a.ts', content: 'a2\n' },
          { exec: ['sh', '-c', `echo go > '${asked}' && cat '${done}'`] },
        ],
        result_json: BUILDER_OK,
      },
    ],
  });
  const running = project.cli(['run']);
  // Opening a FIFO for reading waits for its writer: the builder is mid-BUILD now.
  const question = await open(asked, 'r');
  expect((await question.readFile('utf8')).trim()).toBe('go');
  await question.close();
  writeFileSync(join(project.root, 'src/d1/x.ts'), 'changed from outside\n');
  const answer = await open(done, 'w');
  await answer.writeFile('ok\n');
  await answer.close();
  return running.done;
}
