import { createHash } from 'node:crypto';
import type { BreakerSnapshot } from '../protocol/workflow.js';

/**
 * Seed 002 §6.1, as a pure state machine: the caller feeds it output lines, evidence of progress
 * and completed tasks, and calls `check()` on a timer; it answers with warnings and, after
 * `maxAttempts` triggers, OPEN (the caller kills the agent and the workflow fails with
 * `circuit_breaker_triggered`). Time comes from the injected clock, so tests use a fake one.
 *
 * Triggers: inactivity (no output and no evidence of progress), the same error repeated,
 * stagnation (no task reached `completed`; the dev phase only), and the output-size cap. Special
 * cases: paused while a human gate waits, a longer inactivity threshold in the PR phase (set by the
 * caller) and while the project's test command runs.
 */

export type BreakerTrigger = 'inactivity' | 'repeated_error' | 'stagnation' | 'output_size';

export interface BreakerConfig {
  readonly inactivityMs: number;
  readonly maxRepeatedErrors: number;
  /** Null outside the implementation phase (stagnation is for the dev agent only). */
  readonly stagnationMs: number | null;
  readonly maxOutputBytes: number;
  readonly maxAttempts: number;
  /** When this command shows in the output, inactivity is measured against `testInactivityMs`. */
  readonly testCommand: string | null;
  readonly testInactivityMs: number;
}

export interface BreakerEvent {
  readonly kind: 'warning' | 'open';
  readonly trigger: BreakerTrigger;
  /** Human text of the trigger and its threshold, e.g. "inactivity detected (60s without output)". */
  readonly detail: string;
  readonly attempts: number;
  readonly maxAttempts: number;
}

const ERROR_LINE = /\b(error|exception|fatal|failed|failure|traceback|cannot|unable to)\b/i;
const WINDOW = 10;

export class CircuitBreaker {
  private state: BreakerSnapshot['state'] = 'closed';
  private attempts = 0;
  private lastTrigger: string | null = null;
  private lastActivity: number;
  private lastCompletion: number;
  private outputBytes = 0;
  private outputLimit: number;
  private testsRunning = false;
  private lineCount = 0;
  private lastErrorLine = -1;
  private repeatHash: string | null = null;
  private repeatCount = 0;

  constructor(
    private readonly config: BreakerConfig,
    private readonly now: () => number,
  ) {
    this.lastActivity = now();
    this.lastCompletion = now();
    this.outputLimit = config.maxOutputBytes;
  }

  snapshot(): BreakerSnapshot {
    return {
      state: this.state,
      attempts: this.attempts,
      max_attempts: this.config.maxAttempts,
      last_trigger: this.lastTrigger,
    };
  }

  get isOpen(): boolean {
    return this.state === 'open';
  }

  /** One line of the agent's output: liveness, repeated errors, the test command. */
  onOutput(line: string): BreakerEvent | null {
    if (this.state === 'open' || this.state === 'paused') return null;
    this.lastActivity = this.now();
    if (this.config.testCommand) this.testsRunning = line.includes(this.config.testCommand);
    return this.checkRepeat(line);
  }

  /** Raw output, counted in bytes whatever its lines look like: the output-size cap. */
  onBytes(bytes: number): BreakerEvent | null {
    if (this.state === 'open' || this.state === 'paused') return null;
    this.lastActivity = this.now();
    this.outputBytes += bytes;
    if (this.outputBytes <= this.outputLimit) return null;
    // The next trigger needs another full allowance, not one more byte.
    this.outputLimit = this.outputBytes + this.config.maxOutputBytes;
    return this.trigger(
      'output_size',
      `output size above ${Math.round(this.config.maxOutputBytes / 1024)} KB`,
    );
  }

  /**
   * An agent run starts: the time the runner spent between runs (judging, verifying, committing)
   * is not the agent's silence, and the output-size cap counts one run's output.
   */
  startRun(): void {
    if (this.state === 'open') return;
    this.lastActivity = this.now();
    this.outputBytes = 0;
    this.outputLimit = this.config.maxOutputBytes;
  }

  /** A run that answered normally closes a half-open breaker again: its warnings are behind it. */
  runSucceeded(): void {
    if (this.state !== 'half_open') return;
    this.state = 'closed';
    this.attempts = 0;
  }

  /** Evidence of work without output (files changed, a commit): not stuck. */
  onProgress(): void {
    this.lastActivity = this.now();
  }

  onTaskCompleted(): void {
    this.lastCompletion = this.now();
    this.lastActivity = this.now();
  }

  /** Called on a timer: the time-based triggers. */
  check(): BreakerEvent | null {
    if (this.state === 'open' || this.state === 'paused') return null;
    const now = this.now();
    const inactivity = this.testsRunning ? this.config.testInactivityMs : this.config.inactivityMs;
    if (now - this.lastActivity >= inactivity) {
      this.lastActivity = now;
      return this.trigger(
        'inactivity',
        `inactivity detected (${Math.round(inactivity / 1000)}s without output)`,
      );
    }
    const stagnation = this.config.stagnationMs;
    if (stagnation !== null && now - this.lastCompletion >= stagnation) {
      this.lastCompletion = now;
      return this.trigger(
        'stagnation',
        `task stagnation (no task completed in ${Math.round(stagnation / 60000)} min)`,
      );
    }
    return null;
  }

  /** A human gate is waiting: nothing is measured until `resume`. */
  pause(): void {
    if (this.state !== 'open') this.state = 'paused';
  }

  resume(): void {
    if (this.state !== 'paused') return;
    this.state = this.attempts > 0 ? 'half_open' : 'closed';
    this.lastActivity = this.now();
    this.lastCompletion = this.now();
  }

  /** Lines compared without what changes between two identical failures: times, numbers, hex ids. */
  private checkRepeat(line: string): BreakerEvent | null {
    const normalized = normalize(line);
    if (!normalized) return null;
    this.lineCount++;
    if (!ERROR_LINE.test(normalized)) return null;
    const hash = createHash('sha1').update(normalized).digest('hex');
    // Consecutive: the same error again, no other error between, within the last WINDOW lines.
    const inWindow = this.lineCount - this.lastErrorLine <= WINDOW;
    this.repeatCount = hash === this.repeatHash && inWindow ? this.repeatCount + 1 : 1;
    this.repeatHash = hash;
    this.lastErrorLine = this.lineCount;
    if (this.repeatCount < this.config.maxRepeatedErrors) return null;
    this.repeatCount = 0;
    this.repeatHash = null;
    return this.trigger(
      'repeated_error',
      `same error repeated ${this.config.maxRepeatedErrors} times: ${normalized.slice(0, 120)}`,
    );
  }

  private trigger(trigger: BreakerTrigger, detail: string): BreakerEvent {
    this.attempts++;
    this.lastTrigger = `${trigger}: ${detail}`;
    const open = this.attempts >= this.config.maxAttempts;
    this.state = open ? 'open' : 'half_open';
    return {
      kind: open ? 'open' : 'warning',
      trigger,
      detail,
      attempts: this.attempts,
      maxAttempts: this.config.maxAttempts,
    };
  }
}

/** Drops timestamps, line:column numbers and other digits, so two copies of one error match. */
export function normalize(line: string): string {
  return line
    .replace(/\d{4}-\d{2}-\d{2}[T ][\d:.]+Z?/g, '')
    .replace(/\[?\d{1,2}:\d{2}(:\d{2})?(\.\d+)?\]?/g, '')
    .replace(/:\d+(:\d+)?\b/g, '')
    .replace(/\b0x[0-9a-f]+\b/gi, '')
    .replace(/\d+/g, '#')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The seed's log lines (§6.1), in English. */
export function breakerLogLines(event: BreakerEvent): string[] {
  if (event.kind === 'open') {
    return [
      `⚠ Circuit breaker: ${event.detail}`,
      `✗ Circuit breaker: OPEN - agent stopped after ${event.attempts} attempts`,
    ];
  }
  const watch = event.attempts === 1 ? ', closer watch' : '';
  return [
    `⚠ Circuit breaker: ${event.detail}`,
    `⚠ Circuit breaker: attempt ${event.attempts}/${event.maxAttempts}${watch}`,
  ];
}
