import { afterEach, describe, expect, it } from 'vitest';
import { plainReporter } from '../../source/cli/front-end/plain-reporter.js';
import { phaseRows } from '../../source/ui/panels/PhaseTimeline.js';
import { resultRows } from '../../source/ui/panels/ResultPanel.js';
import { reduceUi } from '../../source/ui/store/reduce.js';
import { initialUiState } from '../../source/ui/store/ui-state.js';
import type { TestProject } from '../support/project.js';
import {
  ghCalls,
  happyScenario,
  runInProcess,
  scriptedGates,
  workflowFile,
  workflowProject,
  YES,
} from '../support/workflow.js';

// The PR phase when the pull request cannot be opened from here (seed 002 §3.4, issue 4): the
// branch is pushed to the remote, the workflow is COMPLETED, and the user is told exactly what to
// run. A local bare repository is the remote; gh is the recording stand-in of test/support.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

const BRANCH = 'ralphy/greeting-service';
const GH_LINE =
  "gh pr create --base main --head ralphy/greeting-service --title 'Greeting service' --body-file relais/PR_BODY.md";

function warnings(run: Awaited<ReturnType<typeof runInProcess>>): string[] {
  return run.events.flatMap((e) => (e.type === 'log' && e.level === 'warn' ? [e.message] : []));
}

describe('PR phase without a pull request', () => {
  it('gh missing but a remote present: the branch is pushed, and the exact gh command is the next step', async () => {
    project = workflowProject();
    project.commitConfig((config) => {
      config.pr.gh_command = 'relais-test-no-such-gh';
    });
    project.scenario(happyScenario());
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome).toMatchObject({ status: 'completed', state: 'COMPLETED', prUrl: null });
    expect(project.git('ls-remote', '--heads', project.remote)).toContain(`refs/heads/${BRANCH}`);
    expect(project.git('rev-parse', `refs/remotes/origin/${BRANCH}`).trim()).toBe(project.head());
    expect(warnings(run)).toContain(
      `No pull request opened: the GitHub CLI (relais-test-no-such-gh) is not installed; ${BRANCH} is pushed`,
    );
    expect(run.outcome.nextSteps).toEqual([
      'install gh (https://cli.github.com) and run gh auth login',
      GH_LINE,
    ]);
    expect(workflowFile(project)).toMatchObject({ pr_url: null, next_steps: run.outcome.nextSteps });
    expect(run.events.at(-1)).toMatchObject({ type: 'run.finished', next_steps: run.outcome.nextSteps });
    // The body the command names is there to use.
    expect(project.read('relais/PR_BODY.md')).toContain('## Summary\nGreet people by name, politely.');
    expect(ghCalls(project)).toEqual([]);
  });

  it('gh fails (not logged in): the branch is pushed, gh said why, and the next steps are gh auth status and the exact command', async () => {
    project = workflowProject();
    project.scenario(happyScenario());
    const run = await runInProcess(project, {
      gates: scriptedGates({ spec: YES, qa: YES }),
      env: { RELAIS_GH_FAIL: '1' },
    });
    expect(run.outcome).toMatchObject({ status: 'completed', state: 'COMPLETED', prUrl: null });
    expect(project.git('ls-remote', '--heads', project.remote)).toContain(`refs/heads/${BRANCH}`);
    expect(ghCalls(project)).toHaveLength(1);
    expect(ghCalls(project)[0]?.slice(0, 2)).toEqual(['pr', 'create']);
    expect(warnings(run)).toContain('No pull request opened: gh pr create failed: HTTP 401: Bad credentials');
    expect(run.outcome.nextSteps).toEqual(['gh auth status', GH_LINE]);
    expect(workflowFile(project)).toMatchObject({ pr_url: null, next_steps: ['gh auth status', GH_LINE] });
  });

  it('no remote: nothing is pushed, WORKFLOW.json says so, and no panel shows the PR phase as done', async () => {
    project = workflowProject();
    project.git('remote', 'remove', 'origin');
    project.scenario(happyScenario());
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome).toMatchObject({ status: 'completed', state: 'COMPLETED', prUrl: null });
    expect(project.git('ls-remote', '--heads', project.remote)).not.toContain(BRANCH);
    const outcome = { kind: 'not_pushed', detail: 'branch ready, not pushed: no git remote "origin"' };
    expect(workflowFile(project).pr_outcome).toEqual(outcome);
    expect(run.events.at(-1)).toMatchObject({ type: 'run.finished', pr_outcome: outcome });
    // The app, fed the run's own events: the PR phase ◐, the end and the result not a ✓.
    const state = run.events.reduce(reduceUi, initialUiState('workflow', project.root, 0));
    expect(state.phases.find((p) => p.state === 'PR')?.status).toBe('partial');
    const text = (rows: ReturnType<typeof phaseRows>) =>
      rows.map((row) => row.map((seg) => ('text' in seg ? seg.text : '')).join('')).join('\n');
    const phases = text(phaseRows(state, 60));
    expect(phases).toMatch(/◐ PR/);
    expect(phases).toContain('◐ COMPLETED · branch ready, not pushed');
    expect(phases).not.toMatch(/✓ (PR|COMPLETED)/);
    expect(state.result).not.toBeNull();
    const result = state.result ? text(resultRows(state.result)) : '';
    expect(result).toContain('◐ Workflow COMPLETED · branch ready, not pushed');
    expect(result).not.toContain('✓');
    // And the plain output of a pipe.
    let out = '';
    const plain = plainReporter({
      cwd: '/',
      env: {},
      stdout: { write: (t: string) => (out += t) },
      stderr: { write: () => true },
    });
    for (const event of run.events.slice(-1)) plain(event);
    expect(out).toContain('PR: branch ready, not pushed: no git remote "origin"');
    // And `relais status`, which read the record alone: COMPLETED, and the PR line says why no PR.
    const status = project.cliSync(['status']);
    expect(status.stdout).toMatch(/^PR: +branch ready, not pushed: no git remote "origin"$/m);
    expect(JSON.parse(project.cliSync(['status', '--json']).stdout).workflow.pr_outcome).toEqual(outcome);
  });

  it('a pull request opened is recorded as opened', async () => {
    project = workflowProject();
    project.scenario(happyScenario());
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome.state).toBe('COMPLETED');
    expect(run.outcome.prUrl).toMatch(/^https?:/);
    expect(workflowFile(project).pr_outcome).toEqual({ kind: 'opened', detail: run.outcome.prUrl });
  });
});
