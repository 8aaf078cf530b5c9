import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { fsck, refsOf, sh } from '../redteam/aftermath.js';
import { type TestProject, unsandboxed } from '../support/project.js';
import {
  happyScenario,
  runInProcess,
  scriptedGates,
  TASKS_MD,
  workflowFile,
  workflowProject,
  YES,
} from '../support/workflow.js';

// Issue 14's git integrity in the workflow's `single` engine (one dev-agent run, then its judge
// and commit), as in a tick: the verdict is bound to the tree the checks ran on, existing objects
// must be intact, refs and files git cannot see are put back on a stop. The checks' cases run in
// the sandbox; the dev-agents that write in .git (objects, refs), which the sandbox keeps
// read-only, run without it: there the judge is the fence under test.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

const ALL_DONE = TASKS_MD.replaceAll('- **Status**: pending', '- **Status**: completed');
const GREET = { write: 'src/a.ts', content: 'export const greet = (n: string) => "Hello, " + n;\n' };
const BYE = { write: 'src/b.ts', content: 'export const bye = (n: string) => "Bye, " + n;\n' };
const DONE = 'Both tasks are implemented and tested.\nEXIT_SIGNAL: true';
const IMPLEMENTATION = 'ralphy: implementation of "Greeting service" (dev-agent)';

function singleWith(checkScript: string | null, writesGitDir = false) {
  return workflowProject((config) => {
    if (writesGitDir)
      unsandboxed(
        'the dev-agent writes into .git/ (objects, refs), which the sandbox refuses: the judge is under test',
      )(config);
    config.workflow.implementation_engine = 'single';
    if (checkScript)
      config.verification.templates.push({ id: 'check', cmd: 'node', args: ['-e', checkScript] });
  });
}

/** The dev-agent's one run: both tasks, TASKS.md completed, plus `extra` actions. */
function devDoes(p: TestProject, extra: unknown[] = []): void {
  const scenario = happyScenario();
  scenario.dev = [
    { actions: [GREET, BYE, { write: 'specs/TASKS.md', content: ALL_DONE }, ...extra], result: DONE },
  ];
  p.scenario(scenario);
}

const subjects = (p: TestProject) => p.git('log', '--format=%s').trim().split('\n');

describe('single engine: the verdict is about the committed tree', () => {
  it('a check that rewrites a source file while it runs stops the run: nothing committed, rolled back', async () => {
    const p = singleWith('require("fs").writeFileSync("src/a.ts", "rewritten by the check\\n")');
    project = p;
    devDoes(p);
    const run = await runInProcess(p, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'integrity_violation' });
    expect(run.outcome.detail).toContain('STOP_TREE_CHANGED_DURING_VERIFY');
    expect(subjects(p)).not.toContain(IMPLEMENTATION);
    expect(p.read('src/a.ts')).toBe('export const a = 1;\n');
    expect(p.status()).toBe('');
    expect(workflowFile(p).tasks_completed).toBe(0);
  });

  it('a file swapped during the checks and put back, same bytes, still stops the run (the checks ran on other bytes)', async () => {
    const p = singleWith(
      'const fs = require("fs"); const was = fs.readFileSync("src/b.ts"); fs.writeFileSync("src/b.ts", "swapped\\n"); fs.writeFileSync("src/b.ts", was)',
    );
    project = p;
    devDoes(p);
    const run = await runInProcess(p, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'integrity_violation' });
    expect(run.outcome.detail).toContain(
      'STOP_TREE_CHANGED_DURING_VERIFY: rewritten while the checks ran: src/b.ts',
    );
    expect(subjects(p)).not.toContain(IMPLEMENTATION);
    expect(p.status()).toBe('');
  });

  it('a file the checks create is their side effect: removed, never committed; the run completes', async () => {
    const p = singleWith('require("fs").writeFileSync("check-output.log", "ran\\n")');
    project = p;
    devDoes(p);
    const run = await runInProcess(p, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome, JSON.stringify(run.outcome)).toMatchObject({ state: 'COMPLETED' });
    expect(subjects(p)).toContain(IMPLEMENTATION);
    // (Later phases run the checks again, unjudged: only the implementation commit is asserted.)
    const commit = p.git('log', '--format=%H', '--grep', 'implementation of', '-1').trim();
    expect(p.git('show', '--name-only', '--format=', commit).trim().split('\n').sort()).toEqual([
      'specs/TASKS.md',
      'src/a.ts',
      'src/b.ts',
    ]);
    expect(run.events.map((e) => (e.type === 'log' ? e.message : ''))).toContainEqual(
      expect.stringContaining(
        "removed 1 file(s) the checks created (not the agent's work): check-output.log",
      ),
    );
  });
});

describe('single engine: git integrity', () => {
  it('an existing object corrupted by the dev-agent: FAILED (integrity_violation), nothing committed', async () => {
    const p = singleWith(null, true);
    project = p;
    // A blob the dev-agent does not touch: the rollback itself does not need to read it.
    const blob = p.git('rev-parse', 'HEAD:PRD.md').trim();
    devDoes(p, [
      sh(`f=.git/objects/${blob.slice(0, 2)}/${blob.slice(2)}; chmod u+w $f; printf garbage > $f`),
    ]);
    const head = p.head();
    const run = await runInProcess(p, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'integrity_violation' });
    expect(run.outcome.detail).toContain(`STOP_GIT_OBJECT_CORRUPTED: object ${blob} was changed`);
    // The spec commit is the last one: the implementation never landed on the damaged repository.
    expect(p.git('log', '-1', '--format=%s').trim()).not.toBe(IMPLEMENTATION);
    expect(p.git('rev-list', '--count', `${head}..HEAD`).trim()).toBe('1');
  });

  it('when the rollback itself fails (the blob it must restore is corrupt), the run says so and keeps the in-flight record', async () => {
    const p = singleWith(null, true);
    project = p;
    const blob = p.git('rev-parse', 'HEAD:src/a.ts').trim();
    devDoes(p, [
      sh(`f=.git/objects/${blob.slice(0, 2)}/${blob.slice(2)}; chmod u+w $f; printf garbage > $f`),
    ]);
    const run = await runInProcess(p, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'integrity_violation' });
    expect(run.outcome.detail).toContain('STOP_GIT_OBJECT_CORRUPTED');
    expect(run.outcome.detail).toContain('STOP_ROLLBACK_FAILED: rollback failed');
    expect(p.exists('relais/INFLIGHT.json')).toBe(true);
  });

  it('branches, tags and a FIFO left by a dev-agent that also went out of scope are all undone', async () => {
    const p = singleWith(null, true);
    project = p;
    p.git('branch', 'keep');
    p.git('tag', 'v1');
    devDoes(p, [
      sh(
        'git branch evil && git tag -f v1 HEAD~0 && git tag planted && git branch -D keep && mkfifo src/pipe',
      ),
      { write: '.github/workflows/deploy.yml', content: 'on: push\n' },
    ]);
    const refsBefore = refsOf(p);
    const run = await runInProcess(p, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'scope_violation' });
    // Besides the workflow's own branch (the spec phase commits there) and where the runner keeps
    // the rolled-back work (refs/relais/recovered/), every ref is as it was.
    const others = (refs: string) =>
      refs
        .split('\n')
        .filter((l) => l && !l.startsWith('refs/heads/ralphy/') && !l.startsWith('refs/relais/'))
        .join('\n');
    expect(others(refsOf(p))).toBe(others(refsBefore));
    expect(p.exists('src/pipe')).toBe(false);
    expect(p.exists('.github/workflows/deploy.yml')).toBe(false);
    expect(fsck(p).ok).toBe(true);
    expect(p.status()).toBe('');
    expect(spawnSync('git', ['tag'], { cwd: p.root, encoding: 'utf8' }).stdout.trim()).toBe('v1');
  });
});
