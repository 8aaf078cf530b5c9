import type { BreakerConfig } from '../../source/engine/supervise/circuit-breaker.js';
import type { ProcessResult } from '../../source/engine/supervise/run-process.js';

/** Seed 002 §6.1's defaults, with a 1 MB output cap: override what a test is about. */
export const TEST_BREAKER: BreakerConfig = {
  inactivityMs: 60_000,
  maxRepeatedErrors: 3,
  stagnationMs: null,
  maxOutputBytes: 1 << 20,
  maxAttempts: 3,
  testCommand: null,
  testInactivityMs: 300_000,
};

/** An agent process that ended by itself at once, for in-process stand-in runners. */
export function endedProcess(exitCode = 0): ProcessResult {
  return {
    exitCode,
    signal: null,
    spawnError: null,
    timedOut: false,
    aborted: false,
    stdoutTail: '',
    stderrTail: '',
    stdoutBytes: 0,
    stderrBytes: 0,
    durationMs: 1,
  };
}
