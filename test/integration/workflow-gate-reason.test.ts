import { afterEach, describe, expect, it } from 'vitest';
import type { GateRequest } from '../../source/engine/gates.js';
import type { TestProject } from '../support/project.js';
import {
  happyScenario,
  runInProcess,
  scriptedGates,
  specStep,
  workflowProject,
  YES,
} from '../support/workflow.js';

// Issue 16 item 5: at a gate the human can read what they approve (the documents travel with the
// request), and a "no" carries an optional reason that is recorded and reaches the agent's next
// attempt.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

const REASON = 'Task 2 must say which locale the greeting uses';

describe('gate documents and a rejection reason', () => {
  it('the spec gate shows SPEC.md and TASKS.md in full; the reason is recorded and reaches the next spec agent', async () => {
    project = workflowProject();
    const scenario = happyScenario();
    scenario.spec = [specStep(), specStep()];
    project.scenario(scenario);

    let specRequest: GateRequest | null = null;
    const first = await runInProcess(project, {
      gates: scriptedGates({
        spec: (request) => {
          specRequest = request;
          return { decision: 'reject', by: 'human', reason: `  ${REASON}  ` };
        },
      }),
    });
    expect(first.outcome.state).toBe('REJECTED');
    const docs = (specRequest as GateRequest | null)?.documents ?? [];
    expect(docs.map((d) => d.name)).toEqual(['specs/SPEC.md', 'specs/TASKS.md']);
    expect(docs[0]?.text).toBe(project.read('specs/SPEC.md'));
    expect(docs[1]?.text).toBe(project.read('specs/TASKS.md'));
    const recorded = JSON.parse(project.read('relais/WORKFLOW.json')).gate_decisions;
    expect(recorded.at(-1)).toMatchObject({ gate: 'spec', decision: 'reject', by: 'human', reason: REASON });
    const resolved = first.events.find((e) => e.type === 'gate.resolved');
    expect(resolved).toMatchObject({ decision: 'reject', answer: REASON });
    // The first spec agent had nothing to be told.
    const specCalls = () => project?.calls().filter((c) => c.role === 'spec') ?? [];
    expect(specCalls()).toHaveLength(1);
    expect(specCalls()[0]?.prompt).not.toContain(REASON);

    const second = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(second.outcome.state, JSON.stringify(second.outcome)).toBe('COMPLETED');
    expect(specCalls()).toHaveLength(2);
    expect(specCalls()[1]?.prompt).toContain(REASON);
    expect(specCalls()[1]?.prompt).toContain('rejected the specification');
    // Defect 17: the carried rejection is the earlier workflow's, and the PR body says so.
    const firstBranch = first.events.find((e) => e.type === 'workflow.started');
    const earlier = firstBranch?.type === 'workflow.started' ? firstBranch.feature_branch : null;
    const now = JSON.parse(project.read('relais/WORKFLOW.json'));
    expect(now.feature_branch).not.toBe(earlier);
    expect(now.gate_decisions[0]).toMatchObject({
      gate: 'spec',
      decision: 'reject',
      earlier_branch: earlier,
    });
    const gates = project.read('relais/PR_BODY.md').split('## Human gates\n')[1]?.split('\n\n')[0] ?? '';
    const lines = gates.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      new RegExp(`^- spec: reject \\(human, .*\\) — in the earlier workflow on ${earlier}, not this one$`),
    );
    expect(lines[1]).toMatch(/^- spec: approve \(human, [^)]*\)$/);
    expect(lines[2]).toMatch(/^- qa: approve \(human, [^)]*\)$/);
  }, 300_000);

  it('the QA gate carries the QA report and the branch diff; a reject without a reason records none', async () => {
    project = workflowProject();
    project.scenario(happyScenario());
    let qaRequest: GateRequest | null = null;
    const run = await runInProcess(project, {
      gates: scriptedGates({
        spec: YES,
        qa: (request) => {
          qaRequest = request;
          return { decision: 'reject', by: 'human', reason: '   ' };
        },
      }),
    });
    expect(run.outcome.state).toBe('FAILED');
    const docs = (qaRequest as GateRequest | null)?.documents ?? [];
    expect(docs.map((d) => d.name)).toEqual(['specs/QA_REPORT.md', 'branch diff']);
    expect(docs[0]?.text).toBe(project.read('specs/QA_REPORT.md'));
    // The diff holds the builders' work, as git sees it.
    expect(docs[1]?.text).toContain('+++ b/src/a.ts');
    expect(docs[1]?.text).toContain('export const bye');
    const recorded = JSON.parse(project.read('relais/WORKFLOW.json')).gate_decisions.at(-1);
    expect(recorded).toMatchObject({ gate: 'qa', decision: 'reject' });
    expect(recorded.reason).toBeUndefined();
    // The lines name where the whole report is: nothing they refer to is out of reach.
    expect((qaRequest as GateRequest | null)?.lines.join('\n')).toContain('The whole report');
  }, 300_000);
});
