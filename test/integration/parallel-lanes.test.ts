import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  contentOf,
  laneSteps,
  lanesProject,
  lanesScenario,
  maxConcurrent,
  treeListing,
} from '../support/lanes.js';
import type { TestProject } from '../support/project.js';
import { NO, runInProcess, scriptedGates, workflowFile, YES } from '../support/workflow.js';

// Issue 19, end to end in process with real fake-claude children: lanes in runner-owned
// worktrees, each tick judged as with one lane, landing through the merge queue.

const projects: TestProject[] = [];
afterEach(() => {
  for (const p of projects.splice(0)) p.dispose();
});

const FOUR = [{}, {}, {}, {}];

async function runPlan(parallel: number, planned = FOUR, configure?: (config: any) => void) {
  const project = lanesProject((config) => {
    config.workflow.parallel = parallel;
    configure?.(config);
  });
  projects.push(project);
  project.scenario(lanesScenario(planned) as any);
  // QA's gate says no: the run ends right after IMPLEMENTATION and QA, which is what is compared here.
  const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: NO }) });
  return { project, run };
}

describe('parallel lanes', () => {
  it('4 independent tasks reach the same final tree at N=1 and N=4; N=4 runs them in worktrees at once', async () => {
    const one = await runPlan(1);
    const four = await runPlan(4);
    for (const { run } of [one, four])
      expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'rejected_at_qa' });
    expect(treeListing(four.project)).toBe(treeListing(one.project));
    expect(four.project.read('src/c.ts')).toBe(contentOf(2));
    // N=1 is today's loop: no lane at all. N=4 ran lanes side by side, every one landed.
    expect(laneSteps(one.run.events)).toEqual([]);
    expect(maxConcurrent(four.run.events)).toBeGreaterThanOrEqual(2);
    const landed = laneSteps(four.run.events).filter(([, , phase]) => phase === 'landed');
    expect(landed.map(([, task]) => task).sort()).toEqual([1, 2, 3, 4]);
    // Each lane's builder ran in its own worktree, not in the main tree.
    const cwds = four.project
      .calls()
      .filter((c: any) => c.role === 'builder')
      .map((c: any) => c.cwd);
    expect(new Set(cwds).size).toBe(4);
    for (const cwd of cwds) expect(cwd).toContain('/relais/worktrees/task-');
    // Merged worktrees are gone, and nothing was left behind.
    for (const cwd of cwds) expect(existsSync(cwd)).toBe(false);
    expect(four.project.git('worktree', 'list').trim().split('\n')).toHaveLength(1);
    expect(four.project.git('branch', '--list', 'relais/lanes/*').trim()).toBe('');
    expect(workflowFile(four.project).tasks.map((t: any) => [t.status, t.verdict])).toEqual(
      Array.from({ length: 4 }, () => ['completed', 'verified']),
    );
    // Every event of a lane's tick carries the lane's name.
    const ticks = four.run.events.filter((e) => e.type === 'tick.finished');
    expect(ticks.map((e) => e.lane).sort()).toEqual(['task-1-1', 'task-2-1', 'task-3-1', 'task-4-1']);
    const agents = four.run.events.filter((e) => e.type === 'agent.started' && e.lane);
    expect(new Set(agents.map((e) => e.lane)).size).toBe(4);
  }, 240_000);

  it('overlapping scopes serialise: the second task starts only after the first landed', async () => {
    const { run } = await runPlan(2, [{ scope: 'src/**' }, { scope: 'src/b.ts' }]);
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'rejected_at_qa' });
    const steps = laneSteps(run.events).map(([, task, phase]) => `${task}:${phase}`);
    expect(steps.indexOf('2:started')).toBeGreaterThan(steps.indexOf('1:landed'));
    expect(maxConcurrent(run.events)).toBe(1);
    expect(
      run.events.some((e) => e.type === 'log' && e.message === 'task 2 waits: scope overlaps task 1'),
    ).toBe(true);
  }, 120_000);
});
