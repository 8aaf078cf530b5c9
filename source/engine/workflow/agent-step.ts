import type { AgentOutcome, AgentRequest, AgentRunner } from '../agents/agent-run.js';
import type { AgentRole, EngineBus } from '../events.js';
import type { BreakerEvent, CircuitBreaker } from '../supervise/circuit-breaker.js';
import type { Clock } from './clock.js';
import { readExitSignal } from './exit-signal.js';
import { readUsageLimit } from './usage-limit.js';

/**
 * One workflow agent step (seed 002 §3, §5, §6, §6.1): the agent runs under the circuit breaker;
 * a CLI error or timeout is retried (independent of the breaker); a usage or rate limit waits for
 * the reset and resumes the same step without counting an attempt; an answer that ends on a
 * question, or a refused permission, goes back to the workflow as a question for the human; the
 * step is done only on `EXIT_SIGNAL: true` in the agent's own final answer.
 */

export type StepOutcome =
  | { kind: 'done'; text: string; costUsd: number }
  | { kind: 'question'; question: string; costUsd: number }
  | { kind: 'breaker_open'; detail: string; costUsd: number }
  | { kind: 'failed'; detail: string; costUsd: number }
  | { kind: 'aborted'; costUsd: number };

export interface AgentStepInput {
  readonly role: AgentRole;
  readonly runner: AgentRunner;
  readonly bus: EngineBus;
  readonly breaker: CircuitBreaker | null;
  readonly clock: Clock;
  /** The phase's signal: abort, interrupt, phase timeout. */
  readonly signal: AbortSignal;
  readonly retries: number;
  /** The request for one run; `note` says why this is not the first (retry reason, human answer). */
  readonly request: (note: string | null) => Promise<Omit<AgentRequest, 'signal' | 'attempt'>>;
  /** Checks a claimed completion against evidence (TASKS.md parses, the report exists): a problem to retry on, or null. */
  readonly verifyDone?: (text: string) => Promise<string | null>;
  /** A fingerprint of the evidence of work (task statuses, commits, files): a change is progress. */
  readonly evidence?: () => Promise<string>;
  readonly onBreaker: (event: BreakerEvent) => void;
  /** The answer the human gave to this agent's last question, if any. */
  readonly answer?: string | null;
}

const MAX_LIMIT_WAITS = 12;
const EVIDENCE_EVERY_MS = 10_000;

export async function runAgentStep(input: AgentStepInput): Promise<StepOutcome> {
  let costUsd = 0;
  let note: string | null = input.answer ? `The human answered your question: ${input.answer}` : null;
  let failures = 0;
  let waits = 0;
  for (let attempt = 1; ; attempt++) {
    const outcome = await runOnce(input, attempt, note);
    costUsd += outcome.costUsd;
    if (input.breaker?.isOpen)
      return {
        kind: 'breaker_open',
        detail: input.breaker.snapshot().last_trigger ?? 'circuit breaker open',
        costUsd,
      };
    if (input.signal.aborted) return { kind: 'aborted', costUsd };
    const limit = readUsageLimit(
      `${outcome.errorText ?? ''}\n${outcome.text ?? ''}`,
      new Date(input.clock.now()),
      outcome.apiErrorStatus,
    );
    if (limit && readExitSignal(outcome.text ?? '') !== 'true' && waits < MAX_LIMIT_WAITS) {
      // A limit is no failure and no stagnation: wait with a visible countdown, then the same step.
      waits++;
      input.bus.emit({ type: 'workflow.waiting', until: limit.resetAt.toISOString(), reason: limit.message });
      input.breaker?.pause();
      await input.clock.sleep(Math.max(0, limit.resetAt.getTime() - input.clock.now()), input.signal);
      input.breaker?.resume();
      if (input.signal.aborted) return { kind: 'aborted', costUsd };
      continue;
    }
    const verdict = await judgeAnswer(outcome, input.verifyDone);
    if (verdict.kind === 'done' || verdict.kind === 'question') return { ...verdict, costUsd };
    failures++;
    if (failures > input.retries) return { kind: 'failed', detail: verdict.detail, costUsd };
    input.bus.emit({
      type: 'log',
      level: 'warn',
      message: `${input.role}-agent: ${verdict.detail}; retrying (${failures}/${input.retries})`,
    });
    note = verdict.retryNote;
  }
}

type Verdict =
  | { kind: 'done'; text: string }
  | { kind: 'question'; question: string }
  | { kind: 'retry'; detail: string; retryNote: string };

async function judgeAnswer(
  outcome: AgentOutcome,
  verifyDone: AgentStepInput['verifyDone'],
): Promise<Verdict> {
  if (outcome.failure !== null || outcome.text === null) {
    const detail = outcome.failure ?? 'no answer';
    return {
      kind: 'retry',
      detail,
      retryNote: `Your previous run did not finish (${detail}). Continue the task.`,
    };
  }
  const signal = readExitSignal(outcome.text);
  if (signal === 'true') {
    // The claim is checked against evidence before it counts.
    const problem = (await verifyDone?.(outcome.text)) ?? null;
    if (problem === null) return { kind: 'done', text: outcome.text };
    return {
      kind: 'retry',
      detail: `claimed done, but ${problem}`,
      retryNote: `You said EXIT_SIGNAL: true, but ${problem}. Fix it, then end with EXIT_SIGNAL: true.`,
    };
  }
  if (outcome.permissionDenials.length > 0) {
    return {
      kind: 'question',
      question: `The agent was denied: ${outcome.permissionDenials.join('; ')}. Allow it, or say what to do instead.`,
    };
  }
  const question = finalQuestion(outcome.text);
  if (question && signal === 'absent') return { kind: 'question', question };
  const detail =
    signal === 'false' ? 'the agent said EXIT_SIGNAL: false' : 'the agent ended without EXIT_SIGNAL: true';
  return {
    kind: 'retry',
    detail,
    retryNote:
      'Your last answer did not end with the status line "EXIT_SIGNAL: true". Finish the task, then end your answer with that line.',
  };
}

/** An answer that ends by asking the human something: its last paragraph ends with "?". */
function finalQuestion(text: string): string | null {
  const paragraphs = text.trim().split(/\n\s*\n/);
  const last = (paragraphs.at(-1) ?? '').trim();
  return last.endsWith('?') ? last.slice(-1000) : null;
}

async function runOnce(input: AgentStepInput, attempt: number, note: string | null): Promise<AgentOutcome> {
  const request = await input.request(note);
  const runner = supervisedRunner(input.runner, {
    breaker: input.breaker,
    clock: input.clock,
    onBreaker: input.onBreaker,
    evidence: input.evidence,
  });
  return runner.run({ ...request, attempt, signal: input.signal }, input.bus);
}

export interface Supervision {
  readonly breaker: CircuitBreaker | null;
  readonly clock: Clock;
  readonly onBreaker: (event: BreakerEvent) => void;
  readonly evidence?: () => Promise<string>;
}

/**
 * Wraps any agent runner so the circuit breaker watches each run: its output feeds the breaker, a
 * timer checks the time-based triggers and the evidence of progress, and OPEN kills the run.
 * The tick engine's orchestrator and builder get the same supervision inside a workflow.
 */
export function supervisedRunner(inner: AgentRunner, supervision: Supervision): AgentRunner {
  return {
    async run(request, bus) {
      const { breaker } = supervision;
      const controller = new AbortController();
      const stopOnCaller = () => controller.abort();
      request.signal.addEventListener('abort', stopOnCaller, { once: true });
      if (request.signal.aborted) controller.abort();
      const handle = (event: BreakerEvent | null | undefined) => {
        if (!event) return;
        supervision.onBreaker(event);
        if (event.kind === 'open') controller.abort();
      };
      let lastEvidence: string | null = null;
      let sinceEvidence = 0;
      const stopTimer = supervision.clock.every(1000, () => {
        handle(breaker?.check());
        sinceEvidence += 1000;
        if (!supervision.evidence || sinceEvidence < EVIDENCE_EVERY_MS) return;
        sinceEvidence = 0;
        void supervision.evidence().then((fingerprint) => {
          if (lastEvidence !== null && fingerprint !== lastEvidence) breaker?.onProgress();
          lastEvidence = fingerprint;
        });
      });
      try {
        return await inner.run(
          {
            ...request,
            signal: controller.signal,
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
              breaker?.onProgress();
            },
          },
          bus,
        );
      } finally {
        stopTimer();
        request.signal.removeEventListener('abort', stopOnCaller);
      }
    },
  };
}
