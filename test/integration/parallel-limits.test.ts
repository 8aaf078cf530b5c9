import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { StampedEvent } from '../../source/engine/events.js';
import { FakeClock } from '../support/fake-clock.js';
import { laneBuilder, laneOrchestrator, laneSteps, lanesProject, lanesScenario } from '../support/lanes.js';
import type { TestProject } from '../support/project.js';
import { NO, runInProcess, scriptedGates, workflowFile, YES } from '../support/workflow.js';

// Issue 19: what the lanes of one workflow share. A usage limit is the account's, so it pauses
// every lane, not only the one that hit it; and the IMPLEMENTATION phase's own caps (issue 18)
// are part of the lanes' reservations, so lanes never overshoot them together.

const projects: TestProject[] = [];
afterEach(() => {
  for (const p of projects.splice(0)) p.dispose();
});

/** [lane, start, end] event indexes of every lane tick (run.started … tick.finished). */
function tickSpans(events: StampedEvent[]): Array<[string, number, number]> {
  const open = new Map<string, number>();
  const spans: Array<[string, number, number]> = [];
  events.forEach((e, i) => {
    if (!e.lane) return;
    if (e.type === 'run.started') open.set(e.lane, i);
    if (e.type === 'tick.finished') spans.push([e.lane, open.get(e.lane) ?? -1, i]);
  });
  return spans.sort((a, b) => a[1] - b[1]);
}

it('a usage limit one lane hits pauses every lane until the reset, then both go on', async () => {
  const project = lanesProject((config) => {
    config.workflow.parallel = 2;
  });
  projects.push(project);
  const release = join(project.harness, 'release-bravo');
  const scenario = lanesScenario([{}, {}]) as any;
  // ALPHA's first orchestrator call hits the account's limit; BRAVO's, already running, finishes
  // only once the limit is known (or at once, if it starts after it).
  scenario.keyed.ALPHA.orchestrator = [
    { is_error: true, result: "You've hit your limit · resets 11am (UTC)", exit_code: 1 },
    laneOrchestrator(0),
  ];
  scenario.keyed.BRAVO.orchestrator = [{ ...laneOrchestrator(1), release_file: release }];
  scenario.keyed.BRAVO.builder = [laneBuilder(1)];
  project.scenario(scenario);
  const clock = new FakeClock(Date.parse('2026-11-22T10:00:00Z'));
  const events: StampedEvent[] = [];
  const paused = new Set<string>();
  let resetAt = -1;
  let duringWait: any = null;
  const run = await runInProcess(project, {
    clock,
    parallel: 2,
    gates: scriptedGates({ spec: YES, qa: NO }),
    onEvent: (event) => {
      events.push(event);
      if (event.type === 'workflow.waiting') writeFileSync(release, 'go');
      const pausedLane = event.type === 'log' && /^lane (task-\d-1) paused until/.exec(event.message)?.[1];
      if (pausedLane) paused.add(pausedLane);
      // A lane that calls its agent during the limit would never pause: the reset comes anyway,
      // and the assertions below say what went wrong (instead of a timeout).
      const calledDuringLimit =
        event.type === 'agent.started' && event.role === 'builder' && paused.has('task-1-1');
      // Both lanes asleep until the reset: an hour passes, on the test's clock.
      if ((paused.size === 2 || calledDuringLimit) && resetAt < 0) {
        duringWait = workflowFile(project);
        setImmediate(() => {
          resetAt = events.length;
          clock.advance(3_600_000);
        });
      }
    },
  });
  expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'rejected_at_qa' });
  expect(workflowFile(project).tasks.map((t: any) => t.status)).toEqual(['completed', 'completed']);
  // One wait, raised by the lane that hit the limit, for every lane.
  const waits = events.filter((e) => e.type === 'workflow.waiting');
  expect(waits).toHaveLength(1);
  expect(waits[0]).toMatchObject({
    lane: 'task-1-1',
    until: '2026-11-22T11:00:00.000Z',
    reason: "You've hit your limit · resets 11am (UTC) (every lane waits: they share the account)",
  });
  const bravoPaused = events.find((e) => e.type === 'log' && e.message.startsWith('lane task-2-1 paused'));
  expect(bravoPaused).toMatchObject({
    lane: 'task-2-1',
    message:
      'lane task-2-1 paused until 2026-11-22T11:00:00.000Z: the usage limit lane task-1-1 hit holds every lane (they share the account)',
  });
  // From the limit to the reset, no lane started an agent call: at most BRAVO's orchestrator
  // shows up, a call that passed the gate before the limit was known (it finishes, as it should).
  const limitAt = events.indexOf(waits[0] as StampedEvent);
  expect(resetAt).toBeGreaterThan(limitAt);
  const started = events.slice(limitAt, resetAt).filter((e) => e.type === 'agent.started');
  expect(started.map((e) => `${e.lane} ${(e as any).role}`)).toEqual(
    started.length === 0 ? [] : ['task-2-1 orchestrator'],
  );
  // After it, both lanes called their agents again: ALPHA's orchestrator, BRAVO's builder.
  const after = events.slice(resetAt).filter((e) => e.type === 'agent.started');
  expect(after.map((e) => `${e.lane} ${(e as any).role}`)).toEqual(
    expect.arrayContaining(['task-1-1 orchestrator', 'task-2-1 builder']),
  );
  // Both lane rows said they waited; the workflow said so in WORKFLOW.json meanwhile.
  const waiting = laneSteps(events).filter(([, , phase]) => phase === 'waiting');
  expect(new Set(waiting.map(([lane]) => lane))).toEqual(new Set(['task-1-1', 'task-2-1']));
  expect(duringWait).toMatchObject({ status: 'waiting', waiting_until: '2026-11-22T11:00:00.000Z' });
  expect(workflowFile(project).waiting_until).toBeNull();
}, 240_000);

it('lanes never overshoot the IMPLEMENTATION phase call cap together: a tick starts only when its worst case fits', async () => {
  const project = lanesProject((config) => {
    config.workflow.parallel = 3;
    // A worst-case tick is 3 calls (orchestrator, its retry, the builder); a real one makes 2.
    config.workflow.phases.implementation.max_calls = 5;
  });
  projects.push(project);
  project.scenario(lanesScenario([{}, {}, {}]) as any);
  const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: NO }) });
  const workflow = workflowFile(project);
  expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'phase_budget_exhausted' });
  expect(workflow.failure_detail).toBe(
    'one more worst-case tick (3 agent calls) does not fit beside the 4 made under workflow.phases.implementation.max_calls 5',
  );
  expect(workflow.phases.IMPLEMENTATION).toMatchObject({ calls: 4, max_calls: 5 });
  expect(workflow.tasks.filter((t: any) => t.status === 'completed')).toHaveLength(2);
  // Three lanes were open, but under the cap their ticks ran one after another.
  const spans = tickSpans(run.events);
  expect(spans).toHaveLength(2);
  expect(spans[1]?.[1]).toBeGreaterThan(spans[0]?.[2] ?? Number.POSITIVE_INFINITY);
  expect(
    run.events.some(
      (e) =>
        e.type === 'log' &&
        e.lane &&
        /^lane task-\d-1 waits for budget: .* \(3 agent call\(s\)\)$/.test(e.message),
    ),
  ).toBe(true);
}, 240_000);
