import { existsSync, mkdtempSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FakeClock } from '../support/fake-clock.js';

/**
 * A tool call in flight during a replay (a `replay.tool` line, see replay-agent.mjs): the agent
 * prints nothing while its tool's child process is busy (a long test run) or idle (a hung
 * command). The test moves the fake clock through that silence one second at a time, as the
 * supervisor's timers would see it, and lets each look for evidence finish before the next; a busy
 * child is given real CPU time before every look, so the look can see it at work. The silence is
 * longer than the breaker's inactivity threshold: only evidence of work keeps the breaker closed.
 */

/** Longer than TEST_BREAKER's 60 s inactivity threshold and several 10 s evidence looks. */
export const SILENCE_MS = 90_000;
/** supervisedRunner looks for evidence every 10 s (EVIDENCE_EVERY_MS). */
const LOOK_EVERY_MS = 10_000;

export interface ToolSilence {
  /** The replay's environment: where it says the child started, where it waits to go on. */
  readonly env: Record<string, string>;
  /** Moves the clock through the silence; resolves when released or when `stop()` was called. */
  drive(clock: FakeClock, busy: boolean, settle: () => Promise<void>): Promise<void>;
  /** The run ended (the breaker killed it, say): the driver stops moving the clock. */
  stop(): void;
  dispose(): void;
}

export function toolSilence(): ToolSilence {
  const dir = mkdtempSync(join(tmpdir(), 'relais-corpus-tool-'));
  const mark = join(dir, 'tool.pid');
  const release = join(dir, 'release');
  let stopped = false;
  let wake: (() => void) | null = null;
  const stop = () => {
    stopped = true;
    wake?.();
  };
  return {
    env: { RELAIS_REPLAY_MARK: mark, RELAIS_REPLAY_RELEASE: release },
    stop,
    dispose: () => rmSync(dir, { recursive: true, force: true }),
    async drive(clock, busy, settle) {
      await new Promise<void>((resolve) => {
        const watcher = watch(dir, () => {
          if (existsSync(mark)) done();
        });
        const done = () => {
          watcher.close();
          wake = null;
          resolve();
        };
        wake = done;
        if (existsSync(mark) || stopped) done();
      });
      if (stopped) return;
      const child = Number(readFileSync(mark, 'utf8'));
      let seen = cpuTicks(child);
      for (let at = 1000; at <= SILENCE_MS && !stopped; at += 1000) {
        if (busy && at % LOOK_EVERY_MS === 0) {
          // The look at this second compares with the last one: the child has worked since.
          await until(() => stopped || cpuTicks(child) > seen);
          seen = cpuTicks(child);
        }
        clock.advance(1000);
        await settle();
      }
      writeFileSync(release, '');
    },
  };
}

/** utime + stime of one process, in clock ticks (0 once it is gone). */
function cpuTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
  } catch {
    return 0;
  }
}

/** Resolves once `condition` holds (polled: /proc says when a process has used CPU, nothing tells). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

/**
 * A watch that counts its looks in flight, so the driver can wait for the one a clock step started
 * (it reads git and /proc) before taking the next step.
 */
export function trackedWatch<A extends unknown[]>(
  inner: (...args: A) => Promise<void>,
): { watch: (...args: A) => Promise<void>; settle: () => Promise<void> } {
  let inFlight = 0;
  return {
    watch: async (...args) => {
      inFlight++;
      try {
        await inner(...args);
      } finally {
        inFlight--;
      }
    },
    settle: async () => {
      await new Promise((resolve) => setImmediate(resolve));
      while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 1));
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}
