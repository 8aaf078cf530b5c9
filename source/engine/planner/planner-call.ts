import type { AgentOutcome, AgentRunner } from '../agents/agent-run.js';
import { CLAUDE_LOGIN_FIX, isLoginFailure } from '../agents/claude-code/readiness.js';
import type { UsageLimit } from '../agents/claude-code/usage-limit.js';
import { MAX_LIMIT_WAITS, waitForReset } from '../agents/limit-wait.js';
import { supervisedRunner } from '../agents/supervised-runner.js';
import { EngineBus } from '../events.js';
import type { RelaisConfig } from '../protocol/config.js';
import { parseModelJson } from '../protocol/model-json.js';
import type { BreakerEvent, CircuitBreaker } from '../supervise/circuit-breaker.js';
import type { Clock } from '../supervise/clock.js';
import { type Batch, batchOf } from './batch.js';
import { plannerAnswerSchema } from './schemas.js';
import type { Validation } from './validate.js';

/**
 * One planner answer: the planner CLI (read-only tools) under the circuit breaker, CLI failures
 * retried (`workflow.agent_retries`), usage limits waited out, and an answer that is not valid
 * JSON or breaks a seed 004 rule sent back once with the runner's reasons (the repair retry).
 * Nothing here executes anything: the caller gets a validated batch or a reason.
 */

export interface PlannerCallInput {
  readonly runner: AgentRunner;
  readonly bus: EngineBus;
  readonly config: RelaisConfig;
  readonly cwd: string;
  readonly signal: AbortSignal;
  readonly clock: Clock;
  readonly breaker: CircuitBreaker | null;
  readonly onBreaker: (event: BreakerEvent) => void;
  /** `reported`: false when the CLI ended (killed, interrupted) before it said what it cost. */
  readonly onCost: (usd: number, reported: boolean) => Promise<void>;
  readonly onWaiting?: (until: Date | null) => Promise<void>;
  readonly systemPrompt: string;
  readonly userPrompt: string;
  readonly validate: (batch: Batch) => Validation;
}

export type PlannerCallOutcome =
  | { kind: 'valid'; batch: Batch; repairs: number; costUsd: number }
  | { kind: 'invalid'; problems: string[]; repairs: number; costUsd: number }
  | { kind: 'failed'; detail: string; repairs: number; costUsd: number }
  | { kind: 'breaker_open'; detail: string; repairs: number; costUsd: number }
  | { kind: 'aborted'; repairs: number; costUsd: number };

/** Seed 004 via the issue: "Invalid actions get one repair retry, then a clear stop". */
const REPAIRS = 1;

export async function callPlanner(input: PlannerCallInput): Promise<PlannerCallOutcome> {
  const { config } = input;
  let costUsd = 0;
  let failures = 0;
  let repairs = 0;
  let waits = 0;
  let retryNote = '';
  for (let attempt = 1; ; attempt++) {
    let limit: UsageLimit | null = null;
    const runner = supervisedRunner(input.runner, {
      breaker: input.breaker,
      clock: input.clock,
      onBreaker: input.onBreaker,
      onLimit: (found) => {
        limit = found;
      },
    });
    const outcome: AgentOutcome = await runner.run(
      {
        role: 'planner',
        attempt,
        systemPrompt: input.systemPrompt,
        userPrompt: `${input.userPrompt}${retryNote}`,
        model: config.agents.planner.model,
        fallbackModel: config.agents.planner.fallback_model,
        maxTurns: config.planner.max_turns,
        maxBudgetUsd: config.planner.max_budget_usd,
        tools: config.planner.tools,
        // Not `plan`: in plan mode Claude Code tells the model to write a plan file with the Write
        // tool (checked with claude 2.1.330), which the planner neither has nor should do. Its
        // tools are read-only, so there is nothing for acceptEdits to accept.
        permissionMode: 'acceptEdits',
        streaming: true,
        cwd: input.cwd,
        timeoutMs: config.planner.timeout_seconds * 1000,
        signal: input.signal,
      },
      withoutAnswerText(input.bus),
    );
    costUsd += outcome.costUsd;
    await input.onCost(outcome.costUsd, outcome.costReported);
    const done = { repairs, costUsd };
    if (input.breaker?.isOpen)
      return { kind: 'breaker_open', detail: input.breaker.snapshot().last_trigger ?? 'open', ...done };
    if (input.signal.aborted) return { kind: 'aborted', ...done };
    const found = limit as UsageLimit | null;
    if (found && waits < MAX_LIMIT_WAITS) {
      waits++;
      await waitForReset({ limit: found, ...input, onWaiting: input.onWaiting });
      if (input.signal.aborted) return { kind: 'aborted', ...done };
      continue;
    }
    if (outcome.failure !== null || outcome.text === null) {
      failures++;
      const ended = endOfFailedRun(outcome, failures, config.workflow.agent_retries, input.bus);
      if (ended !== null) return { kind: 'failed', detail: ended, ...done };
      continue;
    }
    const checked = check(outcome.text, input.validate);
    if (checked.ok) return { kind: 'valid', batch: checked.batch, ...done };
    if (repairs >= REPAIRS) return { kind: 'invalid', problems: checked.problems, ...done };
    repairs++;
    input.bus.emit({
      type: 'log',
      level: 'warn',
      message: `planner answer refused (nothing executed): ${checked.problems.join('; ')}; asking once more`,
    });
    retryNote = repairNote(checked.problems);
  }
}

/** Why a failed run ends the planner call, or null when it runs again (and says so). */
function endOfFailedRun(
  outcome: AgentOutcome,
  failures: number,
  retries: number,
  bus: EngineBus,
): string | null {
  const detail = outcome.failure ?? 'no answer';
  // A missing or refused login is the same on the next run: said with its fix, not retried.
  if (isLoginFailure(outcome)) return `${detail} (not retried: ${CLAUDE_LOGIN_FIX})`;
  if (failures > retries) return detail;
  bus.emit({
    type: 'log',
    level: 'warn',
    message: `planner: ${detail}; running it again (${failures}/${retries})`,
  });
  return null;
}

function check(
  text: string,
  validate: (batch: Batch) => Validation,
): { ok: true; batch: Batch } | { ok: false; problems: string[] } {
  const parsed = parseModelJson(text, plannerAnswerSchema);
  if (!parsed.ok) return { ok: false, problems: [parsed.reason] };
  const batch = batchOf(parsed.value);
  const verdict = validate(batch);
  return verdict.ok ? { ok: true, batch } : { ok: false, problems: verdict.problems };
}

/**
 * The planner's final answer is JSON actions, which the runner shows once executed (questions at
 * the gate, `planner.actions`); front ends get its words and tool calls, not the raw JSON.
 */
function withoutAnswerText(bus: EngineBus): EngineBus {
  let inAnswer = false;
  return new (class extends EngineBus {
    override emit(event: Parameters<EngineBus['emit']>[0]): void {
      if (event.type === 'agent.tool') inAnswer = false;
      if (event.type === 'agent.output' && event.role === 'planner' && event.kind === 'text') {
        if (/^\s*(\{|```)/.test(event.text)) inAnswer = true;
        if (inAnswer) return;
      }
      bus.emit(event);
    }
  })();
}

export function repairNote(problems: readonly string[]): string {
  return [
    '',
    '',
    '=== RETRY ===',
    'The runner refused your previous answer and executed none of it:',
    ...problems.map((p) => `- ${p}`),
    'Answer again with one JSON object {"actions": [...]} that keeps every rule of the actions contract.',
  ].join('\n');
}
