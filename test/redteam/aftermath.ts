import { spawnSync } from 'node:child_process';
import { expect } from 'vitest';
import { BUILDER_OK, type TestProject, task } from '../support/project.js';

/**
 * What every red-team attack must leave behind (issue 14 "Tests that must exist"): the branch
 * where the verdict says, every ref as it was, `git fsck` clean, a clean tree, and a report whose
 * verdict and code are the runner's.
 */

export const sh = (script: string) => ({ exec: ['sh', '-c', script] });

/** A task scope: everything in `src/`, new files allowed. */
export const NEW_FILES_IN_SRC = {
  allowed_globs: ['src/**'],
  forbidden_globs: [],
  allow_new_files: true,
  allow_lockfile_changes: false,
};

/** One tick's scenario: a task in `src/**` that may add files, a builder that does `actions` and says it is done. */
export function builderDoes(project: TestProject, actions: readonly unknown[]): void {
  project.scenario({
    orchestrator: [{ result_json: task({ scope: NEW_FILES_IN_SRC }) }],
    builder: [{ actions: [...actions], result_json: BUILDER_OK }],
  });
}

export function refsOf(project: TestProject): string {
  return project.git('for-each-ref', '--format=%(refname) %(objectname)');
}

export function fsck(project: TestProject): { ok: boolean; output: string } {
  const r = spawnSync('git', ['fsck', '--full', '--strict', '--no-dangling', '--no-progress'], {
    cwd: project.root,
    env: project.env,
    encoding: 'utf8',
  });
  return {
    ok: r.status === 0 && !/error|corrupt|missing|broken/i.test(r.stderr),
    output: r.stderr + r.stdout,
  };
}

export interface Before {
  readonly head: string;
  readonly refs: string;
}

export function snapshotRepo(project: TestProject): Before {
  return { head: project.head(), refs: refsOf(project) };
}

/** A STOP that held: nothing committed, refs as before, fsck clean, clean tree, the report says stop. */
export function expectStopHeld(project: TestProject, was: Before, code: string): void {
  const report = project.report();
  expect(report, JSON.stringify(report.scope)).toMatchObject({ verdict: 'stop', code });
  expect(report.commit ?? null).toBeNull();
  expect(report.rollback).toMatchObject({ performed: true, clean: true });
  expect(project.head()).toBe(was.head);
  expect(refsOf(project)).toBe(was.refs);
  const check = fsck(project);
  expect(check.ok, check.output).toBe(true);
  expect(project.status()).toBe('');
  expect(project.exists('relais/INFLIGHT.json')).toBe(false);
}
