import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TestProject } from '../support/project.js';

// `relais status` lists the commits a recovery kept aside (refs/relais/recovered/...). It asks git
// only when git's files could hold such a ref (issue 17: one git process less at every status).
// These tests check the line is said for a loose ref and for a packed one, and that a repository
// without any starts no `for-each-ref` at all (a git on PATH that logs each call, then runs git).

let project: TestProject;
afterEach(() => project?.dispose());

/** Runs `relais status` with a logging git first on PATH; returns the output and git's subcommands. */
function statusWithGitLog(p: TestProject): { stdout: string; calls: string[] } {
  const bin = join(p.base, 'logging-bin');
  const log = join(p.base, 'git-calls.log');
  mkdirSync(bin, { recursive: true });
  writeFileSync(log, '');
  const realGit = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();
  expect(realGit).toMatch(/^\//);
  writeFileSync(
    join(bin, 'git'),
    `#!/bin/sh\nprintf '%s\\n' "$*" >> ${JSON.stringify(log)}\nexec ${JSON.stringify(realGit)} "$@"\n`,
  );
  chmodSync(join(bin, 'git'), 0o755);
  const run = p.cliSync(['status'], { PATH: `${bin}:${process.env.PATH ?? ''}` });
  expect(run.code, run.stderr).toBe(0);
  const calls = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  // Without any logged call the wrapper was not used, and the test would prove nothing.
  expect(calls.length).toBeGreaterThan(0);
  return { stdout: run.stdout, calls };
}

describe('relais status and the refs a recovery kept aside', () => {
  it('names a loose ref and a packed one, and starts no listing when there is none', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    const head = project.head();

    const none = statusWithGitLog(project);
    expect(none.stdout).not.toContain('kept aside by a recovery');
    expect(none.calls.filter((call) => call.includes('for-each-ref'))).toEqual([]);

    project.git('update-ref', 'refs/relais/recovered/run-1', head);
    const loose = statusWithGitLog(project);
    expect(loose.stdout).toContain(
      `kept aside by a recovery: commits at refs/relais/recovered/run-1 ${head.slice(0, 7)}`,
    );

    project.git('pack-refs', '--all');
    expect(project.git('for-each-ref', 'refs/relais/recovered/')).toContain('run-1');
    const packed = statusWithGitLog(project);
    expect(packed.stdout).toContain('kept aside by a recovery: commits at refs/relais/recovered/run-1');

    project.git('update-ref', '-d', 'refs/relais/recovered/run-1');
    expect(statusWithGitLog(project).stdout).not.toContain('kept aside by a recovery');
  });
});
