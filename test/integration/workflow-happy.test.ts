import { afterEach, describe, expect, it } from 'vitest';
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

// The whole Ralphy workflow (seed 002) with the ticks engine, in process, agents as real child
// processes (the scripted fake-claude), the PR against a local bare remote and a gh stand-in.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

describe('ralphy workflow: the happy path', () => {
  it('walks every §8 state to COMPLETED, judges each task, and opens the PR from evidence', async () => {
    project = workflowProject();
    project.scenario(happyScenario());
    const base = project.head();
    const gates = scriptedGates({ spec: YES, qa: YES });
    const run = await runInProcess(project, { gates });

    expect(
      run.outcome,
      JSON.stringify([run.outcome, run.events.filter((e) => e.type === 'log')]),
    ).toMatchObject({
      status: 'completed',
      state: 'COMPLETED',
      prUrl: 'https://github.com/example/greeting/pull/7',
    });
    expect(run.states).toEqual([
      'SPECIFICATION',
      'AWAITING_SPEC_VALIDATION',
      'IMPLEMENTATION',
      'QA',
      'AWAITING_QA_VALIDATION',
      'PR',
      'COMPLETED',
    ]);
    // The spec gate shows what is approved: the task count and titles.
    expect(gates.asked.map((g) => g.gate)).toEqual(['spec', 'qa']);
    expect(gates.asked[0]?.lines.join('\n')).toContain('specs/TASKS.md (2 tasks)');
    expect(gates.asked[0]?.lines.join('\n')).toContain('1. Greet by name');
    expect(gates.asked[1]?.lines.join('\n')).toContain('No blocking issue');

    // Every commit is on the feature branch; the base branch did not move.
    expect(project.git('rev-parse', 'main').trim()).toBe(base);
    expect(project.git('branch', '--show-current').trim()).toBe('ralphy/greeting-service');
    const log = project.git('log', '--format=%s', `${base}..HEAD`).trim().split('\n').reverse();
    expect(log).toEqual([
      'ralphy: specification and tasks for "Greeting service"',
      'relais(T1): Implement src/a.ts',
      'ralphy: task 1 completed',
      'relais(T2): Implement src/b.ts',
      'ralphy: task 2 completed',
      'ralphy: QA report for "Greeting service"',
    ]);
    expect(project.read('specs/TASKS.md')).not.toContain('pending');
    expect(project.status()).toBe('');

    const workflow = workflowFile(project);
    expect(workflow).toMatchObject({
      state: 'COMPLETED',
      status: 'completed',
      tasks_completed: 2,
      tasks_total: 2,
      failure_reason: null,
      pr_url: 'https://github.com/example/greeting/pull/7',
      blast_radius: { files_touched: 5, new_files: 3 },
    });
    // What the builder claimed and what the runner verified are kept apart.
    expect(workflow.tasks[0].claimed).toBe('did it');
    expect(workflow.tasks[0].verified).toContain('SUCCESS, committed');
    expect(workflow.tasks[0].verified).toContain('verification: ok ✓');
    expect(workflow.gate_decisions.map((g: any) => `${g.gate}:${g.decision}:${g.by}`)).toEqual([
      'spec:approve:human',
      'qa:approve:human',
    ]);

    // The branch is on the remote, and gh was asked for exactly this PR.
    expect(project.git('ls-remote', '--heads', project.remote).trim()).toContain(
      'refs/heads/ralphy/greeting-service',
    );
    const [gh] = ghCalls(project);
    expect(gh?.slice(0, 8)).toEqual([
      'pr',
      'create',
      '--base',
      'main',
      '--head',
      'ralphy/greeting-service',
      '--title',
      'Greeting service',
    ]);
    const body = project.read('relais/PR_BODY.md');
    expect(body).toContain('Greet people by name, politely.');
    expect(body).toContain('- [x] 1. Greet by name — verified: SUCCESS');
    expect(body).toContain('5 file(s)');
    // The runner's own run on the final tree, with the commit it ran on (not a task's line).
    const verification = body
      .split('## Verification (run by the runner, not the agent)\n')[1]
      ?.split('\n\n')[0];
    expect(verification).toMatch(/^On [0-9a-f]{12}: ok ✓ \d+\.\ds$/);
    expect(verification?.slice(3, 15)).toBe(project.head().slice(0, 12));
    expect(workflow.verification).toMatchObject({
      commit: project.head(),
      runs: [{ template_id: 'ok', exit_code: 0 }],
    });
    expect(body).toContain('No blocking issue');
    expect(body).toContain('- qa: approve (human');

    const finished = run.events.find((e) => e.type === 'run.finished');
    expect(finished).toMatchObject({
      state: 'COMPLETED',
      pr_url: 'https://github.com/example/greeting/pull/7',
    });
  });
});
