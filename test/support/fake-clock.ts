import type { Clock } from '../../source/engine/supervise/clock.js';

/**
 * A clock the test moves by hand: sleeps and periodic timers fire only when `advance` passes
 * their time, in order. Nothing waits on real time.
 */
export class FakeClock implements Clock {
  private time: number;
  private readonly timers: Array<{ at: number; fire: () => void; every: number | null; id: number }> = [];
  private ids = 0;
  /** Called whenever a sleep starts (a test awaits the wait it wants to skip). */
  onSleep: ((ms: number) => void) | null = null;

  constructor(start = Date.parse('2026-11-22T10:00:00Z')) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const id = ++this.ids;
      const done = () => {
        this.cancel(id);
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.timers.push({ at: this.time + ms, fire: done, every: null, id });
      signal.addEventListener('abort', done, { once: true });
      this.onSleep?.(ms);
    });
  }

  every(ms: number, fn: () => void): () => void {
    const id = ++this.ids;
    this.timers.push({ at: this.time + ms, fire: fn, every: ms, id });
    return () => this.cancel(id);
  }

  /** Moves time forward, firing every timer that falls due, earliest first. */
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const next = this.timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.time = next.at;
      if (next.every !== null) next.at += next.every;
      else this.cancel(next.id);
      next.fire();
    }
    this.time = end;
  }

  /** Pending one-shot sleeps (not periodic timers). */
  get sleeping(): number {
    return this.timers.filter((t) => t.every === null).length;
  }

  private cancel(id: number): void {
    const i = this.timers.findIndex((t) => t.id === id);
    if (i >= 0) this.timers.splice(i, 1);
  }
}
