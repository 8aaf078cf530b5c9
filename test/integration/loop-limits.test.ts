import { afterEach, describe, expect, it } from 'vitest';
import { EngineBus, type StampedEvent } from '../../source/engine/events.js';
import { runTickWaitingOutLimits } from '../../source/engine/tick/limit-waits.js';
import { runLoop } from '../../source/engine/tick/loop.js';
import { FakeClock } from '../support/fake-clock.js';
import { builderWrites, TestProject, task } from '../support/project.js';

// Issue 15: `relais loop` and `relais run` wait out a usage limit (a countdown event, then the
// same tick again) instead of ending on a false STOP_INTERRUPTED; the limit is no failure.

let project: TestProject;
afterEach(() => project?.dispose());

const LIMIT = { is_error: true, result: "You've hit your session limit · resets 11am (UTC)", exit_code: 1 };
const stop = () => {
  const { builder: _none, ...rest } = task({ task_id: 'DONE' });
  return { ...rest, control: { action: 'stop', reason: 'the goal is met' } };
};

/** A fake clock whose waits pass as soon as they start, and the events of the run. */
function harness() {
  const clock = new FakeClock(Date.parse('2026-11-22T10:00:00Z'));
  const slept: number[] = [];
  clock.onSleep = (ms) => {
    slept.push(ms);
    setImmediate(() => clock.advance(ms));
  };
  const events: StampedEvent[] = [];
  const bus = new EngineBus(() => new Date(clock.now()));
  bus.subscribe((e) => events.push(e));
  return { clock, slept, events, bus };
}

describe('usage limits in relais loop and relais run', () => {
  it('a limit in a loop is waited out and the loop goes on: no stop, the limited tick is not counted', async () => {
    project = TestProject.create();
    project.scenario({
      orchestrator: [LIMIT, { result_json: task({ task_id: 'T1' }) }, { result_json: stop() }],
      builder: [builderWrites({ 'src/a.ts': 'export const a = 2;\n' })],
    });
    const { clock, slept, events, bus } = harness();
    const result = await runLoop({
      root: project.root,
      bus,
      signal: new AbortController().signal,
      env: project.env,
      mode: 'milestone',
      maxTicks: null,
      clock,
    });
    expect(result).toMatchObject({ exit: 'success', ticks: 2 });
    expect(events.find((e) => e.type === 'workflow.waiting')).toMatchObject({
      until: '2026-11-22T11:00:00.000Z',
      reason: "You've hit your session limit · resets 11am (UTC)",
    });
    expect(slept).toContain(60 * 60 * 1000);
    const ticks = events.filter((e) => e.type === 'loop.tick').map((e: any) => `${e.verdict} ${e.task_id}`);
    expect(ticks).toEqual(['success T1', 'success DONE']);
    expect(events.at(-1)).toMatchObject({ type: 'loop.finished', exit: 'success', verdicts: { SUCCESS: 2 } });
    expect(project.read('src/a.ts')).toBe('export const a = 2;\n');
  });

  it('an interrupt during the wait ends the tick as interrupted (run it again to resume)', async () => {
    project = TestProject.create();
    project.scenario({ orchestrator: [LIMIT] });
    const clock = new FakeClock(Date.parse('2026-11-22T10:00:00Z'));
    const controller = new AbortController();
    clock.onSleep = () => setImmediate(() => controller.abort());
    const result = await runTickWaitingOutLimits({
      root: project.root,
      bus: new EngineBus(),
      signal: controller.signal,
      env: project.env,
      command: 'run',
      clock,
    });
    expect(result.interrupted).toBe(true);
    expect(project.calls().filter((c) => c.role === 'orchestrator')).toHaveLength(1);
  });

  it('an ordinary failure is no limit: the tick stops at once, nothing waits', async () => {
    project = TestProject.create();
    project.scenario({ orchestrator: [{ is_error: true, result: 'Invalid API key', exit_code: 1 }] });
    const { clock, slept, events, bus } = harness();
    const result = await runTickWaitingOutLimits({
      root: project.root,
      bus,
      signal: new AbortController().signal,
      env: project.env,
      command: 'run',
      clock,
    });
    expect(result.verdict).not.toBe('success');
    expect(slept).toEqual([]);
    expect(events.some((e) => e.type === 'workflow.waiting')).toBe(false);
  });
});
