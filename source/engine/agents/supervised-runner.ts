import type { BreakerEvent, CircuitBreaker } from '../supervise/circuit-breaker.js';
import type { Clock } from '../supervise/clock.js';
import { type AgentOutcome, type AgentRunner, prestartThrough } from './agent-run.js';
import { readUsageLimit, type UsageLimit } from './claude-code/usage-limit.js';

/**
 * Wraps any agent runner so the circuit breaker watches each run (seed 002 §6.1: "the circuit
 * breaker watches continuously"): the agent's readable lines feed the repeated-error trigger, every
 * byte it writes feeds the output-size cap, a timer checks the time-based triggers, a slower timer
 * looks for evidence of work, and OPEN kills the run. Evidence is also taken when a run starts (the
 * baseline) and when it ends, so a short run that changed files counts as progress too. The tick
 * engine's orchestrator and builder get the same supervision inside a workflow.
 */

export interface Supervision {
  readonly breaker: CircuitBreaker | null;
  readonly clock: Clock;
  readonly onBreaker: (event: BreakerEvent) => void;
  /**
   * Looks for evidence of work the output does not show (files changed, commits, a tool process
   * using CPU) and tells the breaker; called every EVIDENCE_EVERY_MS with the agent's process group,
   * and at the end of the run. With `baseline`, it only records where the run starts from: what the
   * runner itself changed between two runs (a commit, a rollback) is not the agent's progress.
   */
  readonly watch?: (pgid: number | null, options?: { readonly baseline?: boolean }) => Promise<void>;
  /** A usage or rate limit in the run's answer: the caller waits for the reset, then runs it again. */
  readonly onLimit?: (limit: UsageLimit) => void;
}

const CHECK_EVERY_MS = 1000;
export const EVIDENCE_EVERY_MS = 10_000;

export function supervisedRunner(inner: AgentRunner, supervision: Supervision): AgentRunner {
  return {
    // Nothing to supervise yet: a prestarted process is only watched once a run adopts it.
    prestart: prestartThrough(() => inner),
    async run(request, bus) {
      const { breaker, clock } = supervision;
      const controller = new AbortController();
      const stopOnCaller = () => controller.abort();
      request.signal.addEventListener('abort', stopOnCaller, { once: true });
      if (request.signal.aborted) controller.abort();
      const handle = (event: BreakerEvent | null | undefined) => {
        if (!event) return;
        supervision.onBreaker(event);
        if (event.kind === 'open') controller.abort();
      };
      const look = (group: number | null, baseline = false): Promise<void> =>
        supervision.watch?.(group, { baseline }).catch(() => undefined) ?? Promise.resolve();
      if (!controller.signal.aborted) await look(null, true);
      breaker?.startRun();
      let pgid: number | null = null;
      let sinceEvidence = 0;
      let watching: Promise<void> | null = null;
      const stopTimer = clock.every(CHECK_EVERY_MS, () => {
        handle(breaker?.check());
        sinceEvidence += CHECK_EVERY_MS;
        if (!supervision.watch || watching || sinceEvidence < EVIDENCE_EVERY_MS) return;
        sinceEvidence = 0;
        watching = look(pgid).finally(() => {
          watching = null;
        });
      });
      try {
        const outcome = await inner.run(
          {
            ...request,
            signal: controller.signal,
            onSpawn: (group) => {
              pgid = group;
              request.onSpawn?.(group);
            },
            onOutputLine: (line) => {
              request.onOutputLine?.(line);
              handle(breaker?.onOutput(line));
            },
            onOutputBytes: (bytes) => {
              request.onOutputBytes?.(bytes);
              handle(breaker?.onBytes(bytes));
            },
            onActivity: () => {
              request.onActivity?.();
              breaker?.onAlive();
            },
          },
          bus,
        );
        stopTimer();
        // The run's last evidence: progress it made since the last look closes a half-open breaker.
        await watching;
        if (!controller.signal.aborted) await look(null);
        const limit = usageLimitOf(outcome, new Date(clock.now()));
        if (limit) supervision.onLimit?.(limit);
        // Where nothing watches for evidence, a normal answer is the only progress there is. Where
        // something does, a run that merely answered leaves the attempts standing (seed §6.1: they
        // add up until OPEN), so an agent that stalls once in every run is stopped all the same.
        else if (outcome.failure === null && !supervision.watch) breaker?.runSucceeded();
        return outcome;
      } finally {
        stopTimer();
        request.signal.removeEventListener('abort', stopOnCaller);
      }
    },
  };
}

/** Claude Code answers a usage limit with the limit message as its whole (short) result. */
const LIMIT_ANSWER =
  /^(claude ai usage limit reached|claude usage limit reached|you['’]ve hit your (\w+[ -])?limit|you['’]re out of extra usage|((opus|sonnet) )?(5-hour|session|weekly|daily|opus|sonnet) limit reached)/i;

/**
 * A run that ended on a usage or rate limit: the CLI failed with a limit error, or its whole answer
 * is the limit message. An answer that merely mentions a limit while doing its work is not one.
 */
export function usageLimitOf(outcome: AgentOutcome, now: Date): UsageLimit | null {
  const answer = outcome.text?.trim() ?? '';
  if (outcome.failure === null && !LIMIT_ANSWER.test(answer)) return null;
  const said = [outcome.errorText, outcome.failure, answer].filter((t) => t).join('\n');
  return readUsageLimit(said, now, outcome.apiErrorStatus);
}
