import type { AgentOutcome, AgentRequest, AgentRunner } from '../agents/agent-run.js';
import { CLAUDE_LOGIN_FIX, isLoginFailure } from '../agents/claude-code/readiness.js';
import type { UsageLimit } from '../agents/claude-code/usage-limit.js';
import { MAX_LIMIT_WAITS, waitForReset } from '../agents/limit-wait.js';
import { questionOf } from '../agents/needs-input.js';
import { supervisedRunner } from '../agents/supervised-runner.js';
import type { AgentRole, EngineBus } from '../events.js';
import type { BreakerEvent, CircuitBreaker } from '../supervise/circuit-breaker.js';
import type { Clock } from '../supervise/clock.js';
import { copiesPrompt, readExitSignal } from './exit-signal.js';

/**
 * One workflow agent step (seed 002 §3, §5, §6, §6.1): the agent runs under the circuit breaker;
 * a CLI error or timeout is retried (independent of the breaker), except a missing login, which no
 * retry can change; a usage or rate limit waits for
 * the reset and runs the same step again without counting a failure; an answer that ends on a
 * question, or a refused permission, goes back to the workflow as a question for the human; the
 * step is done only on `EXIT_SIGNAL: true` in the agent's own final answer, checked against
 * evidence.
 */

export type StepOutcome =
  | { kind: 'done'; text: string; costUsd: number }
  | { kind: 'question'; question: string; denied: string[]; costUsd: number }
  | { kind: 'breaker_open'; detail: string; costUsd: number }
  | { kind: 'failed'; detail: string; costUsd: number }
  /** Not finished, and `stopIf` says no further run may start (the workflow's spend cap). */
  | { kind: 'over_budget'; detail: string; costUsd: number }
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
  /** Checks a claimed completion against evidence (TASKS.md parses, the tests pass): a problem, or null. */
  readonly verifyDone?: (text: string) => Promise<string | null>;
  /** Evidence of work the output does not show; see Supervision.watch. */
  readonly watch?: (pgid: number | null) => Promise<void>;
  readonly onBreaker: (event: BreakerEvent) => void;
  /** Each run's reported cost, as soon as it is known (the workflow's budget counts it). */
  /** `reported`: false when the CLI ended (killed, interrupted) before it said what it cost. */
  readonly onCost?: (usd: number, reported: boolean) => Promise<void>;
  readonly onWaiting?: (until: Date | null) => Promise<void>;
  /** Checked before any further run: a reason to stop (the spend cap), or null. */
  readonly stopIf?: () => string | null;
}

export async function runAgentStep(input: AgentStepInput): Promise<StepOutcome> {
  let costUsd = 0;
  let note: string | null = null;
  let failures = 0;
  let waits = 0;
  for (let attempt = 1; ; attempt++) {
    let limit: UsageLimit | null = null;
    const runner = supervisedRunner(input.runner, {
      breaker: input.breaker,
      clock: input.clock,
      onBreaker: input.onBreaker,
      watch: input.watch,
      onLimit: (found) => {
        limit = found;
      },
    });
    const request = await input.request(note);
    const outcome = await runner.run({ ...request, attempt, signal: input.signal }, input.bus);
    costUsd += outcome.costUsd;
    await input.onCost?.(outcome.costUsd, outcome.costReported);
    if (input.breaker?.isOpen)
      return { kind: 'breaker_open', detail: input.breaker.snapshot().last_trigger ?? 'open', costUsd };
    if (input.signal.aborted) return { kind: 'aborted', costUsd };
    const found = limit as UsageLimit | null;
    if (found && waits < MAX_LIMIT_WAITS) {
      waits++;
      await waitForReset({ limit: found, ...input });
      if (input.signal.aborted) return { kind: 'aborted', costUsd };
      continue;
    }
    const verdict = await judgeAnswer(
      outcome,
      `${request.systemPrompt}\n${request.userPrompt}`,
      input.verifyDone,
    );
    if (verdict.kind === 'done') return { kind: 'done', text: verdict.text, costUsd };
    const stop = input.stopIf?.() ?? null;
    if (stop !== null) return { kind: 'over_budget', detail: stop, costUsd };
    if (verdict.kind === 'question') return { ...verdict, costUsd };
    // A missing or refused login is the same on the next run: said with its fix, not retried.
    if (isLoginFailure(outcome))
      return { kind: 'failed', detail: `${verdict.detail} (not retried: ${CLAUDE_LOGIN_FIX})`, costUsd };
    failures++;
    if (failures > input.retries) return { kind: 'failed', detail: verdict.detail, costUsd };
    input.bus.emit({
      type: 'log',
      level: 'warn',
      message: `${input.role}-agent: ${verdict.detail}; running it again (${failures}/${input.retries})`,
    });
    note = verdict.retryNote;
  }
}

type Verdict =
  | { kind: 'done'; text: string }
  | { kind: 'question'; question: string; denied: string[] }
  | { kind: 'retry'; detail: string; retryNote: string };

async function judgeAnswer(
  outcome: AgentOutcome,
  prompt: string,
  verifyDone: AgentStepInput['verifyDone'],
): Promise<Verdict> {
  if (outcome.failure !== null || outcome.text === null) {
    const detail = outcome.failure ?? 'no answer';
    return {
      kind: 'retry',
      detail,
      retryNote: `Your previous run did not finish (${detail}). Continue the task where it stands.`,
    };
  }
  const signal = readExitSignal(outcome.text);
  // An answer that ends on the prompt's own words (an echo of the prompt) reported nothing.
  if (signal === 'true' && copiesPrompt(outcome.text, prompt))
    return {
      kind: 'retry',
      detail: 'its final answer copies the prompt instead of reporting',
      retryNote:
        'Your last answer repeated the prompt instead of reporting on your work, so it does not count. Do the task, then say in your own words what you did, and end your answer with the status line the prompt asks for.',
    };
  if (signal === 'true') {
    // The claim is checked against evidence before it counts.
    const problem = (await verifyDone?.(outcome.text)) ?? null;
    if (problem === null) return { kind: 'done', text: outcome.text };
    return {
      kind: 'retry',
      detail: `it claimed to be done, but ${problem}`,
      retryNote: `You ended with EXIT_SIGNAL: true, but the runner checked and ${problem}. Fix it, then end with EXIT_SIGNAL: true.`,
    };
  }
  if (outcome.permissionDenials.length > 0) {
    const denied = [...new Set(outcome.permissionDenials)];
    return {
      kind: 'question',
      denied,
      question: `The agent was denied: ${denied.join('; ')}. Answer "allow" to let it run that next time, or say what to do instead.`,
    };
  }
  // Issue 15: a question followed by the prompt's `EXIT_SIGNAL: false` is still a question.
  const question = questionOf(outcome.text);
  if (question) return { kind: 'question', question, denied: [] };
  // 'false' is also EXIT_SIGNAL: true followed by prose saying work remains: say what is true of both.
  const detail =
    signal === 'false' ? 'its last status said it is not done' : 'it ended without EXIT_SIGNAL: true';
  return {
    kind: 'retry',
    detail,
    retryNote:
      'Your last answer did not end with the status line "EXIT_SIGNAL: true". Finish the task, then end your answer with that line.',
  };
}
