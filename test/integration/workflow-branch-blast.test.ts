import { afterEach, describe, expect, it } from 'vitest';
import type { TestProject } from '../support/project.js';
import { happyScenario, runInProcess, scriptedGates, workflowProject, YES } from '../support/workflow.js';

// Issue 16 item 3: at the gate where the pull request is approved, the app showed only the QA
// report's own change. The engine now measures the whole branch there and says so.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

describe('the QA gate', () => {
  it('is preceded by the whole branch blast radius, and counts only runner-verified tasks', async () => {
    project = workflowProject();
    project.scenario(happyScenario());
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome.state, JSON.stringify(run.outcome)).toBe('COMPLETED');
    const gate = run.events.findIndex((e) => e.type === 'gate.requested' && e.gate === 'qa');
    expect(gate).toBeGreaterThan(0);
    const before = run.events.slice(0, gate).filter((e) => e.type === 'judge.finished');
    const branch = before.at(-1);
    expect(branch).toMatchObject({ scope: 'branch', code: null });
    const paths = branch?.type === 'judge.finished' ? branch.touched_paths : [];
    // Both tasks' files, the spec and the QA report: the branch, not the last step.
    expect(paths).toEqual(expect.arrayContaining(['src/a.ts', 'src/b.ts', 'specs/QA_REPORT.md']));
    const request = run.events[gate];
    const lines = request?.type === 'gate.requested' ? request.lines.join('\n') : '';
    expect(lines).toContain('Tasks verified by the runner: 2/2');
  }, 300_000);
});
