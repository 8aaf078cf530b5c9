import type { AttemptRecord } from '../protocol/workflow.js';

/**
 * Best of N (issue 19), the choice itself, a pure function: among the attempts at one task, the
 * runner keeps one by its own verdict only. Verified attempts come first (their tick was judged in
 * the task's scope and verified by the runner); among them the smallest diff wins (lines added
 * plus deleted, then files changed, then the earliest attempt). What an agent said about its work
 * counts for nothing. No verified attempt: no winner, and the task fails.
 */

export interface Choice {
  readonly winner: string | null;
  /** Why, in words a human reads in WORKFLOW.json, the log and the PR body. */
  readonly reason: string;
}

export function chooseAttempt(attempts: readonly AttemptRecord[]): Choice {
  const verified = attempts
    .map((a, order) => ({ a, order }))
    .filter(({ a }) => a.verified)
    .sort(
      (x, y) =>
        (x.a.lines_changed ?? 0) - (y.a.lines_changed ?? 0) ||
        (x.a.files_changed ?? 0) - (y.a.files_changed ?? 0) ||
        x.order - y.order,
    );
  const best = verified[0]?.a;
  if (!best)
    return {
      winner: null,
      reason: `none of the ${attempts.length} attempts was verified by the runner (${attempts.map(describe).join('; ')})`,
    };
  const others = attempts.filter((a) => a !== best);
  const why =
    verified.length === 1
      ? 'the only attempt the runner verified'
      : `the smallest verified diff of ${verified.length}`;
  return {
    winner: best.lane,
    reason: `${best.lane} lands: ${why}, ${size(best)}${others.length > 0 ? `; discarded: ${others.map(describe).join('; ')}` : ''}`,
  };
}

function size(a: AttemptRecord): string {
  return `${a.lines_changed ?? 0} line(s) in ${a.files_changed ?? 0} file(s)`;
}

function describe(a: AttemptRecord): string {
  return a.verified ? `${a.lane} verified, ${size(a)}` : `${a.lane} not verified (${a.detail})`;
}
