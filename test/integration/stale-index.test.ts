import { spawnSync } from 'node:child_process';
import { utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { builderWrites, TestProject, task } from '../support/project.js';

// Every runner git call has GIT_OPTIONAL_LOCKS=0, so none wrote back the stat data git refreshed:
// files whose stat data went stale in the index (rewritten with the same bytes) were hashed again by
// every status pass of every tick. The tick's own preflight now lets git write it back (judge/repo.ts
// worktreeStatus); `relais status --preflight` still writes nothing. `git diff-files` compares stat
// data only, without refreshing: it names exactly the entries whose stat data is stale.

let project: TestProject;
afterEach(() => project?.dispose());

function staleEntries(p: TestProject): string[] {
  const run = spawnSync('git', ['diff-files', '--name-only'], {
    cwd: p.root,
    encoding: 'utf8',
    env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' },
  });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.split('\n').filter(Boolean).sort();
}

describe('stale stat data in the index', () => {
  it('is refreshed by a tick, not by relais status --preflight', () => {
    const files = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`src/f${i}.ts`, `${i}\n`]));
    project = TestProject.create({ ...files, 'src/a.ts': 'a\n' });
    // Same bytes, new times: what a formatter that changed nothing leaves.
    const later = new Date(Date.now() + 5_000);
    for (const path of Object.keys(files)) utimesSync(join(project.root, path), later, later);
    const stale = Object.keys(files).sort();
    expect(staleEntries(project)).toEqual(stale);

    const preflight = project.cliSync(['status', '--preflight']);
    expect(preflight.code, preflight.stdout).toBe(0);
    expect(staleEntries(project)).toEqual(stale);
    expect(preflight.stdout).toContain('Preflight: OK');

    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [builderWrites({ 'src/a.ts': 'changed\n' })],
    });
    const run = project.cliSync(['run']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(project.report().code).toBe('SUCCESS');
    expect(staleEntries(project)).toEqual([]);
    expect(project.status()).toBe('');
  });
});
