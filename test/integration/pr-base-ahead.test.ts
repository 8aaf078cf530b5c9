import { afterEach, describe, expect, it } from 'vitest';
import type { TestProject } from '../support/project.js';
import { happyScenario, runInProcess, scriptedGates, workflowProject, YES } from '../support/workflow.js';

// Issue 21 item 5: at the PR phase, a local base branch ahead of its remote would make the pull
// request carry unrelated commits; the workflow says so before it pushes.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

const warnings = (run: Awaited<ReturnType<typeof runInProcess>>) =>
  run.events.flatMap((e) => (e.type === 'log' && e.level === 'warn' ? [e.message] : []));

describe('PR phase: base branch ahead of its remote', () => {
  it('warns with the count and the push command', async () => {
    project = workflowProject();
    project.git('push', '-q', 'origin', 'main');
    project.write('NOTES.md', 'a local commit nobody pushed\n');
    project.git('add', 'NOTES.md');
    project.git('commit', '-qm', 'local only');
    project.scenario(happyScenario());
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome).toMatchObject({ state: 'COMPLETED' });
    expect(warnings(run)).toContain(
      'the base branch main is 1 commit(s) ahead of origin/main: the pull request would carry them too. Push main first (git push origin main), or review them in the PR',
    );
  }, 180_000); // a whole workflow: slow on a loaded machine, not a wait

  it('no warning when the base branch is even with its remote', async () => {
    project = workflowProject();
    project.git('push', '-q', 'origin', 'main');
    project.scenario(happyScenario());
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome).toMatchObject({ state: 'COMPLETED' });
    expect(warnings(run).some((w) => w.includes('ahead of origin/main'))).toBe(false);
  }, 180_000);
});
