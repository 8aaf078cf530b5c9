import type { CycleState } from '../state.js';

/**
 * Seed 003 RECORD: "no-progress = same commit_hash AND same test_count after a full execute
 * attempt" (an implementation that failed, or a verification). The first attempt of a task is
 * compared with where it started.
 */
export function afterAttempt(
  state: CycleState,
  base: string,
  head: string,
  testCount: number | null,
): CycleState['loop'] {
  const previous = state.loop.progress_mark ?? { commit_hash: base, test_count: state.last_cycle.test_count };
  const same = previous.commit_hash === head && previous.test_count === testCount;
  return {
    ...state.loop,
    stuck_count: same ? state.loop.stuck_count + 1 : state.loop.stuck_count,
    progress_mark: { commit_hash: head, test_count: testCount },
  };
}
