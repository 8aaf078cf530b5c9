import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { GateAnswer } from '../../source/engine/gates.js';
import { survivorsOf } from '../support/host-pid.js';
import { type TestProject, task } from '../support/project.js';
import {
  happyScenario,
  runInProcess,
  scriptedGates,
  type WorkflowScenario,
  workflowFile,
  workflowProject,
  YES,
} from '../support/workflow.js';

// Issue 4: "A workflow interrupted by a crash or an abort can be resumed by `ralphy start` from
// the last completed phase, after asking." Each phase is interrupted (Ctrl-C: the signal aborts,
// nobody asked for FAILED), then a second run resumes there and completes, without running the
// phases that were already done again.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

type Where = 'agent' | 'gate' | 'pr';

interface Case {
  readonly state: string;
  readonly where: Where;
  readonly role?: string;
  readonly scenario: (s: WorkflowScenario) => void;
}

const hangOnce = (steps: unknown[] | undefined): unknown[] => [
  { say: 'Working.', hang: true },
  ...(steps ?? []),
];

const CASES: Case[] = [
  { state: 'SPECIFICATION', where: 'agent', role: 'spec', scenario: (s) => (s.spec = hangOnce(s.spec)) },
  { state: 'AWAITING_SPEC_VALIDATION', where: 'gate', role: 'spec', scenario: () => undefined },
  {
    state: 'IMPLEMENTATION',
    where: 'agent',
    role: 'builder',
    scenario: (s) => {
      // The interrupted tick's orchestrator answer is spent; the resumed tick asks again.
      s.orchestrator = [s.orchestrator?.[0], ...(s.orchestrator ?? [])];
      s.builder = hangOnce(s.builder);
    },
  },
  { state: 'QA', where: 'agent', role: 'qa', scenario: (s) => (s.qa = hangOnce(s.qa)) },
  { state: 'AWAITING_QA_VALIDATION', where: 'gate', role: 'qa', scenario: () => undefined },
  { state: 'PR', where: 'pr', scenario: () => undefined },
];

/** A workflow interrupted (Ctrl-C) while its spec-agent runs: the common start of the tests below. */
async function interruptedDuringSpec() {
  const interrupted = workflowProject();
  const scenario = happyScenario();
  scenario.spec = hangOnce(scenario.spec);
  interrupted.scenario(scenario);
  const interrupt = new AbortController();
  await runInProcess(interrupted, {
    gates: scriptedGates({}),
    signal: interrupt.signal,
    onEvent: (e) => {
      if (e.type === 'agent.output' && e.role === 'spec') interrupt.abort();
    },
  });
  return interrupted;
}

describe('resume after an interruption, in each phase', () => {
  it.each(CASES)('interrupted in $state: the next start asks, resumes there, and completes', async (c) => {
    project = workflowProject();
    const scenario = happyScenario();
    c.scenario(scenario);
    project.scenario(scenario);
    const interrupt = new AbortController();
    let inPr = false;
    const atGate = (gate: string) => async (): Promise<GateAnswer> => {
      if (c.where === 'gate' && c.role === gate) {
        interrupt.abort();
        return { decision: 'reject', by: 'nobody' };
      }
      return YES;
    };
    const first = await runInProcess(project, {
      gates: scriptedGates({ spec: atGate('spec'), qa: atGate('qa') }),
      signal: interrupt.signal,
      env: c.where === 'pr' ? { RELAIS_GH_HANG: '1' } : {},
      onEvent: (event) => {
        if (c.where === 'agent' && event.type === 'agent.output' && event.role === c.role) interrupt.abort();
        if (event.type === 'workflow.changed') inPr = event.state === 'PR';
        if (c.where === 'pr' && inPr && event.type === 'verify.finished') interrupt.abort();
      },
    });
    expect(first.outcome.status).toBe('interrupted');
    expect(workflowFile(project)).toMatchObject({
      state: c.state,
      status: 'interrupted',
      failure_reason: null,
    });
    expect(project.status()).toBe('');
    if (c.where === 'agent') {
      expect(existsSync(`${project.scenarioPath}.${c.role}.pid`)).toBe(true);
      expect(survivorsOf(project.scenarioPath)).toEqual([]);
    }
    const callsBefore = project.calls().length;
    const stoppedPhases = workflowFile(project).completed_phases;

    const resumeGates = scriptedGates({ resume: YES, spec: YES, qa: YES });
    const second = await runInProcess(project, { gates: resumeGates });
    expect(resumeGates.asked[0]).toMatchObject({ gate: 'resume' });
    // The question is asked over the phases the stopped workflow finished (defect 12).
    const resumable = second.events.findIndex((e) => e.type === 'workflow.resumable');
    expect(resumable).toBeGreaterThanOrEqual(0);
    expect(resumable).toBeLessThan(second.events.findIndex((e) => e.type === 'gate.requested'));
    expect(second.events[resumable]).toMatchObject({ state: c.state, completed_phases: stoppedPhases });
    expect(resumeGates.asked[0]?.lines.join('\n')).toContain(`y: resume at ${c.state}`);
    // One word for the state, the one ralphy status uses (the newcomer's pass, defect 12).
    expect(resumeGates.asked[0]?.title).toBe('Resume the interrupted workflow?');
    expect(resumeGates.asked[0]?.lines[0]).toMatch(/^".+" was interrupted in [A-Z_]+\.$/);
    expect(second.outcome).toMatchObject({ status: 'completed', state: 'COMPLETED' });
    expect(second.states[0]).toBe(c.state);
    expect(second.events.find((e) => e.type === 'workflow.started')).toMatchObject({ resumed_from: c.state });
    // Phases completed before the interruption did not run again.
    const rolesAfter = project
      .calls()
      .slice(callsBefore)
      .map((call) => call.role);
    if (['IMPLEMENTATION', 'QA', 'AWAITING_QA_VALIDATION', 'PR'].includes(c.state))
      expect(rolesAfter).not.toContain('spec');
    if (['QA', 'AWAITING_QA_VALIDATION', 'PR'].includes(c.state)) expect(rolesAfter).not.toContain('builder');
    if (['AWAITING_QA_VALIDATION', 'PR'].includes(c.state)) expect(rolesAfter).not.toContain('qa');
    expect(workflowFile(project).tasks_completed).toBe(2);
  });

  it('answering "n" to the resume question starts a new workflow and keeps the old state in history', async () => {
    project = await interruptedDuringSpec();
    const mainTip = project.git('rev-parse', 'main').trim();
    // Still on the interrupted workflow's branch: the new one starts from that one's base, main.
    expect(project.git('branch', '--show-current').trim()).toBe('ralphy/greeting-service');
    const fresh = await runInProcess(project, {
      gates: scriptedGates({ resume: { decision: 'reject', by: 'human' }, spec: YES, qa: YES }),
    });
    expect(fresh.outcome.state).toBe('COMPLETED');
    expect(fresh.events.find((e) => e.type === 'workflow.started')).toMatchObject({ resumed_from: null });
    // A second branch: the first one (with the interrupted attempt) is left as it was.
    expect(workflowFile(project)).toMatchObject({
      feature_branch: 'ralphy/greeting-service-2',
      base_branch: 'main',
      base_commit: mainTip,
    });
    const archived = readdirSync(join(project.root, 'relais/history/workflows'));
    expect(archived).toHaveLength(1);
    const old = JSON.parse(
      readFileSync(join(project.root, 'relais/history/workflows', archived[0] as string), 'utf8'),
    );
    expect(old).toMatchObject({
      state: 'SPECIFICATION',
      status: 'interrupted',
      feature_branch: 'ralphy/greeting-service',
    });
  });

  it('nobody can answer the resume question: it refuses to start and says how to resume', async () => {
    project = await interruptedDuringSpec();
    const refused = await runInProcess(project, { gates: scriptedGates({}) });
    expect(refused.outcome.status).toBe('blocked');
    expect(refused.outcome.fix).toContain('ralphy start --yes');
    // Nothing was lost or changed: the interrupted workflow is still there to resume.
    expect(workflowFile(project)).toMatchObject({ state: 'SPECIFICATION', status: 'interrupted' });
  });

  it('an orchestrator task that cannot pass is retried with the stop reason, then fails the workflow', async () => {
    project = workflowProject((config) => {
      config.workflow.max_ticks_per_task = 2;
    });
    const outside = task({
      task_id: 'T1',
      scope: {
        allowed_globs: ['src/a.ts'],
        forbidden_globs: [],
        allow_new_files: false,
        allow_lockfile_changes: false,
      },
    });
    const scenario = happyScenario();
    scenario.orchestrator = [{ result_json: outside }, { result_json: outside }];
    // The builder edits a file outside the task scope twice: both ticks stop and roll back.
    scenario.builder = [0, 1].map(() => ({
      actions: [{ write: 'src/b.ts', content: 'sneaky\n' }],
      result_json: { summary: 'done', files_intended: ['src/a.ts'], commands_ran: [], notes: [] },
    }));
    project.scenario(scenario);
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES }) });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'tick_stopped' });
    // The second proposal is the same plan (same task fingerprint): refused before any builder ran.
    expect(run.outcome.detail).toContain(
      'proposed again the plan that already failed with STOP_SCOPE_VIOLATION_OUTSIDE_ALLOWED',
    );
    const second = project.calls().filter((c) => c.role === 'orchestrator')[1];
    expect(second?.prompt).toContain(
      'The previous tick for this task was stopped and rolled back: STOP_SCOPE_VIOLATION_OUTSIDE_ALLOWED',
    );
    expect(project.read('src/b.ts')).toBe('export const b = 1;\n');
    // Not completed, and the row says why: the second tick was refused before a builder ran (so
    // there is no claim), and the runner's code names the stop the repeated plan had already met.
    expect(workflowFile(project).tasks[0]).toMatchObject({
      status: 'in_progress',
      ticks: 2,
      claimed: null,
      verified: expect.stringMatching(/^STOP_PLAN_REPEATED: .*STOP_SCOPE_VIOLATION_OUTSIDE_ALLOWED/),
      verdict: 'rejected',
    });
    // Front ends hear the runner's verdict, never a "verified" for a stopped task (issue 16 item 1).
    const updates = run.events.filter((e) => e.type === 'task.updated');
    expect(updates.some((e) => e.verdict === 'rejected')).toBe(true);
    expect(updates.filter((e) => e.verdict === 'verified')).toEqual([]);
  });
});
