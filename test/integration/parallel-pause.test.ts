import { afterEach, expect, it } from 'vitest';
import { contentOf, FILES, laneSteps, lanesProject, lanesScenario } from '../support/lanes.js';
import type { TestProject } from '../support/project.js';
import { NO, runInProcess, scriptedGates, workflowFile, YES } from '../support/workflow.js';

// Issue 19 with the pause key: during a parallel run, every lane ends the tick it is in (a
// verified one lands), no lane takes a new tick, no new task starts; the run ends interrupted with
// nothing lost, and `ralphy start` resumes the rest.

let project: TestProject | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

it('p during a lane builder: that tick lands, task 3 never starts, IMPLEMENTATION interrupted; a resume finishes every task', async () => {
  project = lanesProject((config) => {
    config.workflow.parallel = 2;
  });
  const p = project;
  // Three independent tasks at two lanes: task 3 waits for a free lane.
  p.scenario(lanesScenario([{}, {}, {}]) as any);
  let paused = false;
  const first = await runInProcess(p, {
    gates: scriptedGates({ spec: YES, qa: NO }),
    pauseRequested: () => paused,
    // The key is pressed while task 1's builder runs (an event of the run, not a timer).
    onEvent: (event) => {
      if (event.type === 'agent.started' && event.role === 'builder' && event.lane === 'task-1-1')
        paused = true;
    },
  });
  expect(first.outcome.status).toBe('interrupted');
  expect(first.states).not.toContain('FAILED');
  const w = workflowFile(p);
  expect(w).toMatchObject({ state: 'IMPLEMENTATION', status: 'interrupted' });
  expect(first.outcome.nextSteps.join(' ')).toContain('ralphy start');

  // The builder that ran when p was pressed finished: its tick was judged, verified and landed.
  expect(w.tasks[0]).toMatchObject({ status: 'completed', verdict: 'verified' });
  expect(p.read(FILES[0] as string)).toBe(contentOf(0));
  // Task 3 never started: no lane, no builder for it.
  const steps = laneSteps(first.events);
  expect(steps.filter(([, task]) => task === 3)).toEqual([]);
  expect(p.calls().some((c) => c.role === 'builder' && c.prompt.includes('[lane CHARLIE]'))).toBe(false);
  expect(w.tasks[2].status).toBe('pending');
  // Task 2 either landed its tick (it was running) or ended paused before one: never failed or kept.
  const task2 = steps.filter(([, task]) => task === 2).map(([, , phase]) => phase);
  expect(task2.at(-1)).toMatch(/^(landed|paused)$/);
  expect(steps.some(([, , phase]) => phase === 'failed' || phase === 'kept')).toBe(false);
  if (task2.at(-1) === 'paused') expect(w.tasks[1].status).not.toBe('completed');
  else expect(p.read(FILES[1] as string)).toBe(contentOf(1));

  const resumed = await runInProcess(p, { gates: scriptedGates({ resume: YES, qa: NO }) });
  expect(resumed.states[0]).toBe('IMPLEMENTATION');
  expect(resumed.outcome).toMatchObject({ state: 'FAILED', reason: 'rejected_at_qa' });
  expect(workflowFile(p).tasks.map((t: any) => [t.status, t.verdict])).toEqual(
    Array.from({ length: 3 }, () => ['completed', 'verified']),
  );
  for (const i of [0, 1, 2]) expect(p.read(FILES[i] as string)).toBe(contentOf(i));
  // Each task's builder ran once over both runs: a paused lane lost no work it had done.
  const builders = p.calls().filter((c) => c.role === 'builder');
  expect(builders).toHaveLength(3);
  expect(p.git('worktree', 'list').trim().split('\n')).toHaveLength(1);
  expect(p.git('status', '--porcelain')).toBe('');
}, 300_000);
