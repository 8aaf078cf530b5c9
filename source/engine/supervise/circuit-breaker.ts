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
 *
 * Attempts add up (seed §6.1: attempt += 1 until OPEN) across the runs of a phase for as long as
 * nothing shows progress: a run that merely answers does not wipe them, or an agent that stalls
 * once per run would never be stopped. Evidence of progress (a changed tree, a commit, a tool at
 * work, a task completed) closes a half-open breaker again; after a stagnation warning only a
 * completed task does, since stagnation is exactly work that completes nothing.
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

/**
 * What makes a line an error line, for the repeated-error trigger. Whole words are not enough:
 * `TypeError:`, `AssertionError`, `npm ERR!`, `ENOENT`, `ERR_MODULE_NOT_FOUND` and jest's
 * `FAIL src/x.test.ts` are the loops agents really get stuck in.
 */
const ERROR_WORDS =
  /\b(error|exception)s?\b(?!\.\w)|\b(fatal|fail|fails|failed|failure|failures|failing|panic|traceback|cannot|can't|unable to|not found|no such file|denied|segmentation fault)\b(?!\.\w)|\bERR!/i;
/**
 * `TypeError:`, `AssertionError`: the case-sensitive suffix of a class name. The `(?!\.\w)` here
 * and above keeps file names out (`src/errors.ts`, `handleError.ts`, `fail.test.ts` in a tool
 * call line are not errors).
 */
const ERROR_CLASS = /[a-z](Error|Exception)\b(?!\.\w)/;
/** Error codes are upper case: `ENOENT` is an error, "enough" is not. */
const ERROR_CODES =
  /\b(ENOENT|EACCES|EPERM|EEXIST|ENOTDIR|EISDIR|ENOTEMPTY|EADDRINUSE|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EMFILE|ENOSPC|EROFS|EBUSY|ENOTFOUND|EAI_AGAIN|EINVAL|ELOOP|ENOMEM|ERR_[A-Z0-9_]+)\b/;
/**
 * Reports that nothing failed ("0 errors", "no failures", "Tests: 0 failed, 3 passed", "without
 * errors") are success lines, not errors: they are removed before the line is judged.
 */
const NOTHING_FAILED =
  /\b(0|no|zero|without)\s+(\w+\s+)?(errors?|exceptions?|fail(s|ed|ures?|ing)?|problems?)\b/gi;

/** `npm run test` is also typed `npm test` (likewise pnpm, yarn): either form means the tests run. */
function mentionsCommand(line: string, command: string): boolean {
  if (line.includes(command)) return true;
  const short = command.replace(/^(npm|pnpm|yarn) run (test|start)\b/, '$1 $2');
  return short !== command && line.includes(short);
}

export function isErrorLine(line: string): boolean {
  const rest = line.replace(NOTHING_FAILED, ' ');
  return ERROR_WORDS.test(rest) || ERROR_CLASS.test(rest) || ERROR_CODES.test(rest);
}

/** Seed §6.1: the repeats must lie within the last 10 lines of output. */
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
  /** A stagnation warning stands among the attempts: only a completed task answers it. */
  private stagnating = false;
  private lineCount = 0;
  /** The error lines among the last WINDOW lines of output: their line number and hash. */
  private recentErrors: Array<{ line: number; hash: string }> = [];

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
    if (this.config.testCommand) this.testsRunning = mentionsCommand(line, this.config.testCommand);
    return this.checkRepeat(line);
  }

  /**
   * Raw output, counted in bytes whatever its lines look like (JSON or not, cut or whole, stdout
   * or stderr): the output-size cap.
   */
  onBytes(bytes: number): BreakerEvent | null {
    if (this.state === 'open' || this.state === 'paused') return null;
    this.lastActivity = this.now();
    this.outputBytes += bytes;
    if (this.outputBytes <= this.outputLimit) return null;
    // The next trigger needs another full allowance, not one more byte.
    this.outputLimit = this.outputBytes + this.config.maxOutputBytes;
    return this.trigger(
      'output_size',
      `output size ${this.outputBytes} bytes in this run; threshold ${this.config.maxOutputBytes} bytes, max_output_size`,
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

  /**
   * Closes a half-open breaker unconditionally: for runs nothing watches for evidence (a planner
   * that only reads), where a normal answer is the only sign of progress there is. Supervised runs
   * with an evidence watcher do not call it: their progress closes the breaker (`onProgress`).
   */
  runSucceeded(): void {
    if (this.state !== 'half_open') return;
    this.close();
  }

  /** Any sign of life (bytes on stdout or stderr, an API retry line): liveness, not progress. */
  onAlive(): void {
    if (this.state === 'open' || this.state === 'paused') return;
    this.lastActivity = this.now();
  }

  /**
   * Evidence of work the output may not show (files changed, a commit, a tool process at work):
   * not stuck, and a half-open breaker closes again, unless a stagnation warning stands.
   */
  onProgress(): void {
    if (this.state === 'open' || this.state === 'paused') return;
    this.lastActivity = this.now();
    if (this.state === 'half_open' && !this.stagnating) this.close();
  }

  onTaskCompleted(): void {
    if (this.state === 'open' || this.state === 'paused') return;
    this.lastCompletion = this.now();
    this.lastActivity = this.now();
    if (this.state === 'half_open') this.close();
  }

  /** Called on a timer: the time-based triggers. */
  check(): BreakerEvent | null {
    if (this.state === 'open' || this.state === 'paused') return null;
    const now = this.now();
    const inactivity = this.testsRunning ? this.config.testInactivityMs : this.config.inactivityMs;
    // Issue 15: what it saw and the threshold, in the config's unit (seconds), never rounded to 0 min.
    if (now - this.lastActivity >= inactivity) {
      const silent = now - this.lastActivity;
      this.lastActivity = now;
      const which = this.testsRunning ? 'test_inactivity_timeout' : 'inactivity_timeout';
      return this.trigger(
        'inactivity',
        `inactivity detected (${seconds(silent)} without output; threshold ${seconds(inactivity)}, ${which})`,
      );
    }
    const stagnation = this.config.stagnationMs;
    if (stagnation !== null && now - this.lastCompletion >= stagnation) {
      const since = now - this.lastCompletion;
      this.lastCompletion = now;
      return this.trigger(
        'stagnation',
        `task stagnation (no task completed in ${seconds(since)}; threshold ${seconds(stagnation)}, task_stagnation_timeout)`,
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

  /**
   * Lines compared without what changes between two identical failures: times, numbers, hex ids.
   * Issue 15: the trigger counts copies of one error, not repetition in general, and not only
   * back-to-back copies: a two-line npm error printed again and again alternates its two lines,
   * and each of them comes back. Lines that are no errors (editing the same file, re-running a
   * passing test) never count. All the copies that count lie within the last WINDOW lines.
   */
  private checkRepeat(line: string): BreakerEvent | null {
    const normalized = normalize(line);
    if (!normalized) return null;
    this.lineCount++;
    const oldest = this.lineCount - WINDOW + 1;
    this.recentErrors = this.recentErrors.filter((e) => e.line >= oldest);
    // Judged on the line as written: normalizing first would turn "0 errors" into "# errors".
    if (!isErrorLine(line)) return null;
    const hash = createHash('sha1').update(normalized).digest('hex');
    this.recentErrors.push({ line: this.lineCount, hash });
    const copies = this.recentErrors.filter((e) => e.hash === hash).length;
    if (copies < this.config.maxRepeatedErrors) return null;
    this.recentErrors = [];
    return this.trigger(
      'repeated_error',
      `same error seen ${copies} times within ${WINDOW} lines (threshold ${this.config.maxRepeatedErrors}): ${normalized.slice(0, 120)}`,
    );
  }

  private close(): void {
    this.state = 'closed';
    this.attempts = 0;
    this.stagnating = false;
  }

  private trigger(trigger: BreakerTrigger, detail: string): BreakerEvent {
    this.attempts++;
    if (trigger === 'stagnation') this.stagnating = true;
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

/** A duration as the config writes it: whole seconds (`90s`, floored), never rounded to another unit. */
function seconds(ms: number): string {
  return `${Math.floor(ms / 1000)}s`;
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
