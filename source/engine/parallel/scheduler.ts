import { scopesOverlap } from './scope-overlap.js';

/**
 * The lane scheduler (issue 19), a pure function: which pending tasks may start now. A task may
 * start when every task it depends on is completed, a lane is free, and its declared scope does
 * not overlap the scope of a running task. A task without a declared scope runs alone: it starts
 * only when nothing runs, and nothing starts beside it. Tasks are taken in file order, so N=1 is
 * exactly the single-lane order.
 */

export interface SchedulableTask {
  readonly number: number;
  readonly status: 'pending' | 'in_progress' | 'completed';
  readonly dependsOn: readonly number[];
  /** null: undeclared, the task runs alone. */
  readonly scope: readonly string[] | null;
}

export interface Schedule {
  /** Task numbers to start now, in file order. */
  readonly start: number[];
  /** Why each pending task that does not start waits (for the Lanes panel and the log). */
  readonly waiting: ReadonlyMap<number, string>;
}

export function schedule(
  tasks: readonly SchedulableTask[],
  running: readonly number[],
  lanes: number,
): Schedule {
  const byNumber = new Map(tasks.map((t) => [t.number, t]));
  const active = running.map((n) => byNumber.get(n)).filter((t): t is SchedulableTask => t !== undefined);
  const start: number[] = [];
  const waiting = new Map<number, string>();
  for (const task of tasks) {
    if (task.status === 'completed' || running.includes(task.number)) continue;
    const unmet = task.dependsOn.filter((d) => byNumber.get(d)?.status !== 'completed');
    if (unmet.length > 0) {
      waiting.set(task.number, `waits for task ${unmet.join(', task ')}`);
      continue;
    }
    if (active.length >= lanes) {
      waiting.set(task.number, `all ${lanes} lane(s) busy`);
      continue;
    }
    const alone = active.find((t) => t.scope === null);
    if (alone) {
      waiting.set(task.number, `task ${alone.number} declares no scope and runs alone`);
      continue;
    }
    if (task.scope === null) {
      if (active.length > 0)
        waiting.set(task.number, 'declares no scope: runs alone, after the running lanes');
      else {
        start.push(task.number);
        active.push(task);
      }
      continue;
    }
    const clash = active.find((t) => scopesOverlap(t.scope ?? [], task.scope ?? []));
    if (clash) {
      waiting.set(task.number, `scope overlaps task ${clash.number}`);
      continue;
    }
    start.push(task.number);
    active.push(task);
  }
  return { start, waiting };
}
