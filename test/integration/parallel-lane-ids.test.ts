import { afterEach, expect, it } from 'vitest';
import { plainReporter } from '../../source/cli/front-end/plain-reporter.js';
import type { StampedEvent } from '../../source/engine/events.js';
import { FakeClock } from '../support/fake-clock.js';
import { lanesProject, lanesScenario } from '../support/lanes.js';
import type { TestProject } from '../support/project.js';
import { workflowFile } from '../support/workflow.js';

// Issue 19: the lane id on every event a lane causes, and on every plain line of it. A 2-lane run
// of the built CLI (`ralphy start --parallel 2 --yes --json`) where one lane's builder asks a
// question nobody can answer (a gate, the breaker paused and resumed) and the budget makes the
// lanes take turns (the "waits for budget" line): the NDJSON it prints is checked event by event.

let project: TestProject | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

/** What only a lane's work emits during IMPLEMENTATION: each must say which lane. */
const LANE_CAUSED = new Set([
  'run.started',
  'phase.changed',
  'task.proposed',
  'agent.started',
  'agent.output',
  'agent.tool',
  'agent.retry',
  'agent.finished',
  'judge.finished',
  'verify.started',
  'verify.finished',
  'ledger.updated',
  'budget.warning',
  'tick.finished',
  'run.finished',
  'breaker.changed',
  'gate.requested',
  'gate.resolved',
  'workflow.waiting',
  'workflow.spend',
  'task.updated',
  'lane.changed',
  'merge.changed',
  'log',
]);

/** The scheduler's line about a task that is in no lane yet names the task instead. */
const schedulerLine = (e: StampedEvent) => e.type === 'log' && /^task \d+ waits: /.test(e.message);

it('every event a lane causes carries its lane, in the NDJSON and on the plain lines', async () => {
  project = lanesProject((config) => {
    // One worst-case tick ($2.30) fits, two do not: the second lane waits for budget.
    config.workflow.max_cost_usd = 3.5;
  });
  const scenario = lanesScenario([{}, {}]) as any;
  scenario.keyed.ALPHA.builder = [{ result: 'Before I write src/a.ts: should ALPHA be 1 or 2?' }];
  project.scenario(scenario);
  const run = await project.cli(['start', '--parallel', '2', '--yes', '--json'], { env: { IS_SANDBOX: '1' } })
    .done;
  const events: StampedEvent[] = run.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  // ALPHA's question cannot be answered with --yes: its lane fails, BRAVO's lands.
  expect(workflowFile(project)).toMatchObject({ state: 'FAILED', failure_reason: 'needs_input' });
  const start = events.findIndex((e) => e.type === 'workflow.changed' && e.state === 'IMPLEMENTATION');
  const end = events.findIndex((e, i) => i > start && e.type === 'workflow.changed');
  expect(start).toBeGreaterThan(0);
  const window = events.slice(start + 1, end);
  const lanes = new Set(window.flatMap((e) => (e.type === 'lane.changed' ? [e.lane] : [])));
  expect(lanes).toEqual(new Set(['task-1-1', 'task-2-1']));

  const caused = window.filter((e) => LANE_CAUSED.has(e.type) && !schedulerLine(e));
  const unlabelled = caused.filter((e) => !e.lane || !lanes.has(e.lane));
  expect(unlabelled.map((e) => JSON.stringify(e).slice(0, 200))).toEqual([]);

  // The events the issue names, each with the right lane.
  const of = (type: string, lane: string) => caused.filter((e) => e.type === type && e.lane === lane);
  expect(of('gate.requested', 'task-1-1')).toHaveLength(1);
  expect(of('gate.requested', 'task-1-1')[0]).toMatchObject({
    title: 'builder-agent of task 1 (lane task-1-1) needs input',
  });
  expect(of('gate.resolved', 'task-1-1')).toHaveLength(1);
  // The gate paused and resumed ALPHA's breaker: BRAVO's was never paused.
  const paused = (lane: string) =>
    of('breaker.changed', lane).filter((e) => e.type === 'breaker.changed' && e.breaker.state === 'paused');
  expect(paused('task-1-1').length).toBeGreaterThan(0);
  expect(paused('task-2-1')).toEqual([]);
  expect(caused.some((e) => e.type === 'log' && /^lane task-\d-1 waits for budget/.test(e.message))).toBe(
    true,
  );
  for (const lane of lanes) {
    expect(of('workflow.spend', lane).length, lane).toBeGreaterThan(0);
    expect(of('task.updated', lane).length, lane).toBeGreaterThan(0);
    expect(of('agent.started', lane).length, lane).toBeGreaterThan(0);
  }

  // Each lane's breaker is its own in WORKFLOW.json.
  const breakers = workflowFile(project).lane_breakers;
  expect(Object.keys(breakers).sort()).toEqual(['task-1-1', 'task-2-1']);
  expect(breakers['task-1-1']).toMatchObject({ state: 'closed', attempts: 0 });
  const status = project.cliSync(['status']);
  expect(status.stdout).toContain('Lane:      breaker of task-1-1 closed (0/3)');
  expect(status.stdout).toContain('Lane:      breaker of task-2-1 closed (0/3)');

  // The same events as plain lines: every line of a lane's event starts with its lane.
  let out = '';
  const plain = plainReporter(
    { cwd: '/', env: {}, stdout: { write: (t: string) => (out += t) }, stderr: { write: () => true } } as any,
    new FakeClock(),
  );
  for (const event of caused) {
    out = '';
    plain(event);
    for (const line of out.split('\n').filter(Boolean))
      expect(line, `${event.type} printed ${line}`).toMatch(
        new RegExp(`^\\[\\d{2}:\\d{2}:\\d{2}\\] \\[${event.lane}\\] `),
      );
  }
}, 240_000);
