import type { Verdict } from '../engine/index.js';

/**
 * Process exit codes, documented in the README. 2 is a usage error because that is what the
 * argument parser (and most CLIs) use for it; a BLOCKED run is 3 so scripts can tell them apart.
 */
export const EXIT = {
  SUCCESS: 0,
  STOP: 1,
  USAGE: 2,
  BLOCKED: 3,
  INTERNAL: 70,
  INTERRUPTED: 130,
} as const;

export function exitCodeFor(verdict: Verdict, interrupted: boolean): number {
  if (interrupted) return EXIT.INTERRUPTED;
  return verdict === 'success' ? EXIT.SUCCESS : verdict === 'stop' ? EXIT.STOP : EXIT.BLOCKED;
}
