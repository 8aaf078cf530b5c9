import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { requestAbort } from '../../source/engine/workflow/abort-request.js';
import { workspacePaths } from '../../source/engine/workspace/paths.js';
import { FakeClock } from '../support/fake-clock.js';
import { BUILDER_OK, type TestProject, task } from '../support/project.js';
import {
  happyScenario,
  NO,
  runInProcess,
  scriptedGates,
  specStep,
  TASKS_MD,
  workflowFile,
  workflowProject,
  YES,
} from '../support/workflow.js';

// Edges a review found: each test failed before its fix.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

describe('workflow edges', () => {
  it('a QA report rejected at the second gate is run again on resume, never skipped into the PR', async () => {
    project = workflowProject();
    const scenario = happyScenario();
    scenario.qa = [...(scenario.qa ?? []), ...(happyScenario().qa ?? [])];
    project.scenario(scenario);
    const rejected = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: NO }) });
    expect(rejected.outcome.reason).toBe('rejected_at_qa');
    const resumed = await runInProcess(project, { gates: scriptedGates({ resume: YES, qa: YES }) });
    expect(resumed.states).toEqual(['QA', 'AWAITING_QA_VALIDATION', 'PR', 'COMPLETED']);
    expect(project.calls().filter((c) => c.role === 'qa')).toHaveLength(2);
  });

  it('a workflow ended by ralphy abort is resumed by the next start, from the last completed phase', async () => {
    project = workflowProject();
    const scenario = happyScenario();
    scenario.qa = [{ say: 'Reviewing.', hang: true }, ...(scenario.qa ?? [])];
    project.scenario(scenario);
    const paths = workspacePaths(project.root, 'relais');
    const aborted = await runInProcess(project, {
      gates: scriptedGates({ spec: YES, qa: YES }),
      onEvent: (e) => {
        if (e.type === 'agent.output' && e.role === 'qa') void requestAbort(paths, new Date());
      },
    });
    expect(aborted.outcome).toMatchObject({ state: 'FAILED', reason: 'aborted' });
    const resumed = await runInProcess(project, { gates: scriptedGates({ resume: YES, qa: YES }) });
    expect(resumed.states).toEqual(['QA', 'AWAITING_QA_VALIDATION', 'PR', 'COMPLETED']);
    expect(project.calls().filter((c) => c.role === 'builder')).toHaveLength(2);
  });

  it('a TASKS.md with CRLF line endings gets its statuses rewritten and committed', async () => {
    project = workflowProject();
    const scenario = happyScenario();
    scenario.spec = [
      specStep({
        actions: [
          { write: 'specs/SPEC.md', content: '# Spec\r\n' },
          { write: 'specs/TASKS.md', content: TASKS_MD.replace(/\n/g, '\r\n') },
        ],
      }),
    ];
    project.scenario(scenario);
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome.state, JSON.stringify(run.outcome)).toBe('COMPLETED');
    const tasks = project.read('specs/TASKS.md');
    expect(tasks).toContain('- **Status**: completed\r\n');
    expect(tasks).not.toContain('pending');
  });

  it('a tick that changed nothing and verified nothing does not complete its task', async () => {
    project = workflowProject((config) => {
      config.workflow.max_ticks_per_task = 2;
      config.verification.templates = [];
    });
    const idle = task({ task_id: 'T1', verification: { fast: [], slow: [] } });
    const scenario = happyScenario();
    scenario.orchestrator = [{ result_json: idle }, { result_json: idle }];
    scenario.builder = [{ result_json: BUILDER_OK }, { result_json: BUILDER_OK }];
    project.scenario(scenario);
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES }) });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'tick_stopped' });
    const first = workflowFile(project).tasks[0];
    // Not accepted (no change), then the same plan again, which the runner refuses to repeat.
    expect(first).toMatchObject({ status: 'in_progress', verdict: 'rejected' });
    expect(first.verified).toContain('STOP_PLAN_REPEATED');
    const second = project.calls().filter((c) => c.role === 'orchestrator')[1];
    expect(second?.prompt).toContain('The last step changed nothing, so task 1 is not done');
  });

  it("a tick that requested no verification gets the project's checks from the runner", async () => {
    project = workflowProject();
    const scenario = happyScenario();
    scenario.orchestrator = (scenario.orchestrator ?? []).map((step: any) => ({
      result_json: { ...step.result_json, verification: { fast: [], slow: [] } },
    }));
    project.scenario(scenario);
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome.state).toBe('COMPLETED');
    expect(workflowFile(project).tasks[0].verified).toMatch(/verification: ok ✓/);
  });

  it("a human's time at a gate does not count against the phase timeout", async () => {
    project = workflowProject((config) => {
      config.workflow.timeouts.specification = 60;
      config.circuit_breaker.enabled = false;
    });
    project.scenario({ spec: [{ result: 'Formal or casual?' }, specStep()] });
    const clock = new FakeClock();
    const run = await runInProcess(project, {
      clock,
      gates: scriptedGates({
        input: () => {
          clock.advance(10 * 60_000); // ten minutes to answer; the phase has one
          return { decision: 'answer', by: 'human', text: 'Formal.' };
        },
        spec: NO,
      }),
    });
    expect(run.outcome.state, JSON.stringify(run.outcome)).toBe('REJECTED');
  });

  it('a WORKFLOW.json whose branch name could be read as an option is refused, never passed to git', async () => {
    project = workflowProject();
    const scenario = happyScenario();
    scenario.spec = [{ say: 'Working.', hang: true }];
    project.scenario(scenario);
    const interrupt = new AbortController();
    await runInProcess(project, {
      gates: scriptedGates({}),
      signal: interrupt.signal,
      onEvent: (e) => {
        if (e.type === 'agent.output' && e.role === 'spec') interrupt.abort();
      },
    });
    const path = join(project.root, 'relais/WORKFLOW.json');
    const tampered = { ...workflowFile(project), feature_branch: '--upload-pack=touch /tmp/pwned' };
    writeFileSync(path, JSON.stringify(tampered));
    const run = await runInProcess(project, { gates: scriptedGates({ resume: YES }) });
    expect(run.outcome.status).toBe('blocked');
    expect(run.outcome.detail).toContain('WORKFLOW.json is unreadable');
    expect(run.outcome.detail).toContain('not a safe git branch name');
  });

  it('a config left untracked by a start that stopped early does not block the next start', async () => {
    project = workflowProject();
    project.scenario(happyScenario());
    // As `relais init` leaves it when the first start is refused (no claude, say).
    project.git('rm', '-q', '--cached', 'relais.config.json');
    project.git('commit', '-qm', 'untrack the config');
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome.state, JSON.stringify(run.outcome)).toBe('COMPLETED');
    expect(project.git('log', '--format=%s', 'main..HEAD')).toContain('ralphy: add relais config');
  });
});
