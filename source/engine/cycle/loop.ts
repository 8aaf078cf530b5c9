import type { CycleOptions } from './context.js';
import { type CycleOutcome, runCycle } from './run-cycle.js';

/**
 * `relais cycle --loop`: ralph.sh's loop. Cycles run until DONE, a human is needed, a cycle is
 * refused, the run is interrupted, `max_consecutive_failures` CYCLE_FAILs in a row, or
 * `max_cycles_per_loop` cycles.
 */

export type LoopEnd = 'done' | 'needs_human' | 'refused' | 'interrupted' | 'failures' | 'max_cycles';

export interface CycleLoopResult {
  readonly cycles: number;
  readonly last: CycleOutcome | null;
  readonly end: LoopEnd;
}

export async function runCycleLoop(
  options: Omit<CycleOptions, 'cycleId'>,
  /** Ends the loop early (as "done") once an outcome satisfies it: a track runner stops at its track's end. */
  until?: (outcome: CycleOutcome) => boolean,
): Promise<CycleLoopResult> {
  let cycles = 0;
  let failuresInARow = 0;
  let last: CycleOutcome | null = null;
  for (;;) {
    if (options.signal.aborted) return { cycles, last, end: 'interrupted' };
    if (cycles >= options.policy.max_cycles_per_loop) return { cycles, last, end: 'max_cycles' };
    last = await runCycle(options);
    cycles++;
    if (options.signal.aborted) return { cycles, last, end: 'interrupted' };
    if (last.reply === 'DONE' || (until?.(last) && !last.refused && last.phase !== 'needs_human'))
      return { cycles, last, end: 'done' };
    if (last.refused) return { cycles, last, end: last.phase === 'needs_human' ? 'needs_human' : 'refused' };
    if (last.phase === 'needs_human') return { cycles, last, end: 'needs_human' };
    failuresInARow = last.reply === 'CYCLE_FAIL' ? failuresInARow + 1 : 0;
    if (failuresInARow >= options.policy.max_consecutive_failures) return { cycles, last, end: 'failures' };
  }
}
