import { describe, expect, it } from 'vitest';
import { chooseAttempt } from '../../source/engine/parallel/best-of-choice.js';
import { BestOfGroup } from '../../source/engine/parallel/best-of-group.js';
import type { AttemptRecord } from '../../source/engine/protocol/workflow.js';
import { parseTasks } from '../../source/engine/workflow/tasks-file.js';

// Issue 19, best of N: the runner's choice among attempts (pure), the group that waits for all
// of them, and the `Risk` line of TASKS.md that asks for it.

const ok = (lane: string, lines: number, files = 1): AttemptRecord => ({
  lane,
  verified: true,
  lines_changed: lines,
  files_changed: files,
  detail: 'verified',
});
const failed = (lane: string, detail = 'tick_stopped: no verified tick'): AttemptRecord => ({
  lane,
  verified: false,
  lines_changed: null,
  files_changed: null,
  detail,
});

describe('choosing among attempts', () => {
  it('verified first: an unverified attempt never wins, however small', () => {
    const choice = chooseAttempt([failed('task-1-1'), ok('task-1-2', 40, 3)]);
    expect(choice.winner).toBe('task-1-2');
    expect(choice.reason).toBe(
      'task-1-2 lands: the only attempt the runner verified, 40 line(s) in 3 file(s); discarded: task-1-1 not verified (tick_stopped: no verified tick)',
    );
  });

  it('then the fewest lines, then the fewest files, then the earliest attempt', () => {
    expect(chooseAttempt([ok('task-1-1', 9), ok('task-1-2', 4), ok('task-1-3', 6)]).winner).toBe('task-1-2');
    expect(chooseAttempt([ok('task-1-1', 4, 2), ok('task-1-2', 4, 1)]).winner).toBe('task-1-2');
    expect(chooseAttempt([ok('task-1-1', 4, 1), ok('task-1-2', 4, 1)]).winner).toBe('task-1-1');
  });

  it('none verified: no winner, and the reason names every attempt', () => {
    const choice = chooseAttempt([failed('task-2-1', 'a'), failed('task-2-2', 'b')]);
    expect(choice).toEqual({
      winner: null,
      reason:
        'none of the 2 attempts was verified by the runner (task-2-1 not verified (a); task-2-2 not verified (b))',
    });
  });
});

describe('the group of attempts', () => {
  it('a verified attempt waits until every attempt is in; the choice is recorded before anyone is told', async () => {
    const order: string[] = [];
    const group = new BestOfGroup(3, async (choice) => {
      order.push(`recorded ${choice.winner}`);
    });
    const signal = new AbortController().signal;
    const first = group.submit(1, ok('task-1-1', 10), signal).then((v) => order.push(`1 ${v}`));
    const second = group.submit(2, ok('task-1-2', 2), signal).then((v) => order.push(`2 ${v}`));
    await Promise.resolve();
    expect(order).toEqual([]);
    expect(group.pending).toEqual([3]);
    await group.ended(3, failed('task-1-3'));
    await Promise.all([first, second]);
    expect(order).toEqual(['recorded task-1-2', '1 lost', '2 won']);
    expect(group.winnerIndex).toBe(2);
    // The winner back from a failed landing is told at once.
    await expect(group.submit(2, ok('task-1-4', 2), signal)).resolves.toBe('won');
  });

  it('an abort frees a waiting attempt', async () => {
    const group = new BestOfGroup(2, async () => {});
    const abort = new AbortController();
    const waiting = group.submit(1, ok('task-1-1', 1), abort.signal);
    abort.abort();
    await expect(waiting).resolves.toBe('aborted');
  });

  it('a record that cannot be written still tells every waiting attempt', async () => {
    const group = new BestOfGroup(2, async () => {
      throw new Error('disk full');
    });
    const waiting = group.submit(1, ok('task-1-1', 1), new AbortController().signal);
    await group.ended(2, failed('task-1-2')).catch(() => undefined);
    await expect(waiting).resolves.toBe('won');
  });
});

describe('TASKS.md Risk line', () => {
  const tasks = (risk: string) =>
    parseTasks(
      `## Task 1: A\n- **Status**: pending\n- **Risk**: ${risk}\n\n## Task 2: B\n- **Status**: pending\n`,
    );

  it('high marks the task risky; low, medium, none and no line do not', () => {
    const high = tasks('high');
    expect(high.ok && high.tasks.map((t) => t.risky)).toEqual([true, false]);
    for (const calm of ['low', 'medium', 'none', '**Low**']) {
      const parsed = tasks(calm);
      expect(parsed.ok && parsed.tasks.map((t) => t.risky)).toEqual([false, false]);
    }
  });

  it('any other word is refused with its line', () => {
    expect(tasks('spicy')).toEqual({
      ok: false,
      problems: ['line 3: "Risk" is "spicy", not high, medium, low or none'],
    });
  });
});
