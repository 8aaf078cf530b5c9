import { expect, it } from 'vitest';
import { plainReporter } from '../../source/cli/front-end/plain-reporter.js';
import type { EngineEvent, StampedEvent } from '../../source/engine/events.js';
import { FakeClock } from '../support/fake-clock.js';

// Issue 19: plain lines say which lane they come from, and what lanes and the merge queue do.

it('a lane-tagged event is prefixed with its lane on every line; lane and merge events read as sentences', () => {
  const clock = new FakeClock();
  let out = '';
  const report = plainReporter(
    { cwd: '/', env: {}, stdout: { write: (t: string) => (out += t) }, stderr: { write: () => true } },
    clock,
  );
  const emit = (event: EngineEvent, lane?: string) =>
    report({ ...event, at: new Date(clock.now()).toISOString(), ...(lane ? { lane } : {}) } as StampedEvent);
  emit({ type: 'phase.changed', phase: 'BUILD' }, 'task-2-1');
  emit({ type: 'phase.changed', phase: 'BUILD' });
  emit({
    type: 'lane.changed',
    lane: 'task-2-1',
    task: 2,
    title: 'Billing',
    phase: 'kept',
    worktree: '/r/relais/worktrees/task-2-1',
    detail: 'merge_failed: conflict',
    cost_usd: 0.1,
  });
  emit({
    type: 'merge.changed',
    lane: 'task-3-1',
    step: 'check_failed',
    detail: 'test exited 1',
    waiting: ['task-4-1'],
  });
  // A lane name is model-free, but still never lets a control character through.
  emit({ type: 'phase.changed', phase: 'JUDGE' }, 'task-1-1\u001b[2J');
  const lines = out
    .split('\n')
    .filter(Boolean)
    .map((l) => l.replace(/^\[\d{2}:\d{2}:\d{2}\] /, ''));
  expect(lines[0]).toMatch(/^\[task-2-1\] /);
  expect(lines[1]).not.toContain('[task-');
  // Lane and merge events name their lane in `lane` themselves, so they carry the prefix too.
  expect(lines[2]).toBe(
    '[task-2-1] Lane task-2-1 task 2 Billing: kept (merge_failed: conflict) worktree /r/relais/worktrees/task-2-1',
  );
  expect(lines[3]).toBe('[task-3-1] Merge queue: task-3-1 check failed (test exited 1); waiting: task-4-1');
  expect(lines[4]).not.toContain('\u001b');
});
