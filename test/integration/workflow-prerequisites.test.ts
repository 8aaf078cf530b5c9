import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EngineBus, type StampedEvent } from '../../source/engine/events.js';
import { denyAll } from '../../source/engine/gates.js';
import { realClock } from '../../source/engine/supervise/clock.js';
import { runWorkflow } from '../../source/engine/workflow/run-workflow.js';
import type { TestProject } from '../support/project.js';
import { happyScenario, PRD, workflowProject } from '../support/workflow.js';

// Seed 002 §11 before `ralphy start` does anything: a project that is no git repository, or has
// no commit, is refused with the fix; git identity and gh missing are warnings, each with its fix,
// and the workflow goes on.

const folders: string[] = [];
let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
  for (const f of folders.splice(0)) rmSync(f, { recursive: true, force: true });
});

/** A folder with a PRD.md and nothing else (git decides the rest). */
function bareFolder(): string {
  const base = mkdtempSync(join(tmpdir(), 'relais-prereq-'));
  folders.push(base);
  const root = join(base, 'project');
  mkdirSync(root);
  writeFileSync(join(root, 'PRD.md'), PRD);
  return root;
}

async function start(root: string) {
  const bus = new EngineBus();
  const events: StampedEvent[] = [];
  bus.subscribe((e) => events.push(e));
  const outcome = await runWorkflow({
    root,
    bus,
    signal: new AbortController().signal,
    // git must not find a repository above the temp folder.
    env: { ...process.env, GIT_CEILING_DIRECTORIES: dirname(root), HOME: dirname(root) },
    gates: denyAll,
    clock: realClock,
  });
  const logs = events.flatMap((e) => (e.type === 'log' ? [`${e.level}: ${e.message}`] : []));
  return { outcome, logs };
}

const GIT_FIX =
  'Run ralphy start at the root of a git repository with at least one commit (git init, git commit).';
// Inside a repository that has no commit yet, "git init" is no fix: the first commit is.
const FIRST_COMMIT_FIX = 'Make a first commit (git add -A && git commit -m "Initial commit").';

describe('ralphy start prerequisites (seed 002 §11)', () => {
  it('not a git repository: refused with the fix, nothing written', async () => {
    const root = bareFolder();
    const { outcome, logs } = await start(root);
    expect(outcome).toMatchObject({ status: 'blocked', fix: GIT_FIX });
    expect(outcome.detail).toMatch(/^not a git repository: /);
    expect(logs).toEqual([`error: Cannot start: ${outcome.detail}`, `info: Fix: ${GIT_FIX}`]);
    expect(spawnSync('ls', ['-A', root], { encoding: 'utf8' }).stdout.trim()).toBe('PRD.md');
  });

  it('a git repository without a commit: refused with the fix', async () => {
    const root = bareFolder();
    spawnSync('git', ['init', '-q', '-b', 'main'], { cwd: root });
    const { outcome, logs } = await start(root);
    expect(outcome).toMatchObject({
      status: 'blocked',
      detail: 'HEAD does not name a commit; make an initial commit first',
      fix: FIRST_COMMIT_FIX,
    });
    expect(logs).toContain(`info: Fix: ${FIRST_COMMIT_FIX}`);
  });

  // Through the CLI: the fallback identity is decided from the process's own environment.
  it('no git identity and no gh: two warnings, each with its fix, and the workflow goes on', async () => {
    project = workflowProject();
    project.commitConfig((config) => {
      config.pr.gh_command = 'relais-test-no-such-gh';
    });
    project.scenario(happyScenario());
    const noIdentity = {
      IS_SANDBOX: '1',
      GIT_AUTHOR_NAME: '',
      GIT_AUTHOR_EMAIL: '',
      GIT_COMMITTER_NAME: '',
      GIT_COMMITTER_EMAIL: '',
    };
    const run = await project.cli(['start'], { env: noIdentity }).done;
    expect(run.stdout).toMatch(
      /^\[\d{2}:\d{2}:\d{2}\] WARN: git identity: git user.name or user.email is not set; commits will be signed "Relais <relais@localhost>". Fix: git config --global user.name "Your Name" && git config --global user.email you@example.com$/m,
    );
    expect(run.stdout).toMatch(
      /^\[\d{2}:\d{2}:\d{2}\] WARN: gh: the GitHub CLI \(relais-test-no-such-gh\) is not installed: the branch will be pushed but no pull request opened. Fix: Install gh \(https:\/\/cli.github.com\), then gh auth login$/m,
    );
    // Warnings only: the spec was written and committed, and the first gate waits for a human.
    expect(run.code, run.stdout).toBe(1);
    expect(run.stdout).toContain('Gate spec: nobody could answer: the gate waits');
    expect(project.git('log', '-1', '--format=%an <%ae>').trim()).toBe('Relais <relais@localhost>');
  });
});
