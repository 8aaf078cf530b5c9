import { afterEach, expect, it } from 'vitest';
import type { StampedEvent } from '../../source/engine/events.js';
import { lanesProject, lanesScenario } from '../support/lanes.js';
import type { TestProject } from '../support/project.js';
import { NO, runInProcess, scriptedGates, workflowFile, YES } from '../support/workflow.js';

// Issue 19: one budget across lanes. Each tick reserves its worst case (orchestrator call and
// retry at $0.40 each, builder at $1.50: $2.30) before it starts; under a $3.50 cap two such ticks
// never fit together, so two lanes that could run side by side take turns.

let project: TestProject | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

/** [start, end] indexes of every lane tick (run.started … tick.finished, by lane). */
function tickSpans(events: StampedEvent[]): Array<[string, number, number]> {
  const open = new Map<string, number>();
  const spans: Array<[string, number, number]> = [];
  events.forEach((e, i) => {
    if (!e.lane) return;
    if (e.type === 'run.started') open.set(e.lane, i);
    if (e.type === 'tick.finished') spans.push([e.lane, open.get(e.lane) ?? -1, i]);
  });
  return spans;
}

it('two lanes never exceed a cap together: the second tick waits for the first to settle', async () => {
  project = lanesProject((config) => {
    config.workflow.parallel = 2;
    config.workflow.max_cost_usd = 3.5;
  });
  project.scenario(lanesScenario([{}, {}]) as any);
  const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: NO }) });
  expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'rejected_at_qa' });
  expect(workflowFile(project).tasks.map((t: any) => t.status)).toEqual(['completed', 'completed']);
  // Both lanes were open at once (independent scopes), but their ticks never overlapped.
  const started = run.events.filter((e) => e.type === 'lane.changed' && e.phase === 'started');
  expect(started).toHaveLength(2);
  const spans = tickSpans(run.events);
  expect(spans).toHaveLength(2);
  const [first, second] = spans.sort((a, b) => a[1] - b[1]) as [
    [string, number, number],
    [string, number, number],
  ];
  expect(first[0]).not.toBe(second[0]);
  expect(second[1]).toBeGreaterThan(first[2]);
  expect(
    run.events.some(
      (e) => e.type === 'log' && /^lane task-\d-1 waits for budget: \$2\.30 is reserved/.test(e.message),
    ),
  ).toBe(true);
  expect(workflowFile(project).cost_usd).toBeLessThanOrEqual(3.5);
}, 300_000);
