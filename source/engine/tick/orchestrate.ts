import type { AgentOutcome, AgentRequest, AgentRunner } from '../agents/agent-run.js';
import { questionOf } from '../agents/needs-input.js';
import type { EngineBus } from '../events.js';
import type { RelaisConfig } from '../protocol/config.js';
import { parseModelJson } from '../protocol/model-json.js';
import { type Task, taskSchema } from '../protocol/task.js';

/**
 * ORCHESTRATE (seed 000 §8, Appendix A2): one call, plus one retry only when the answer is not a
 * valid task, with the reason appended. A failed call (process error, timeout, API error, no
 * result string) is STOP_INTERRUPTED and is not retried: G3 allows no hidden retries.
 */

export type OrchestrateOutcome =
  | { kind: 'task'; task: Task; calls: number; costUsd: number }
  /** It asked the human instead of proposing a task (issue 15): no retry, the question gate. */
  | { kind: 'question'; question: string; calls: number; costUsd: number }
  | { kind: 'invalid'; reason: string; calls: number; costUsd: number }
  | { kind: 'failed'; failure: string; aborted: boolean; calls: number; costUsd: number };

export interface OrchestrateInput {
  readonly config: RelaisConfig;
  readonly runner: AgentRunner;
  readonly bus: EngineBus;
  readonly systemPrompt: string;
  readonly userPrompt: string;
  readonly cwd: string;
  readonly signal: AbortSignal;
  readonly timeoutMs: () => number;
  /** Runner policy beyond the schema (enabled builder modes, patch budget): a reason to refuse, or null. */
  readonly acceptTask?: (task: Task) => string | null;
  /** Called before every call, so the call is counted even if the runner dies during it. */
  readonly onCallStart: () => Promise<void>;
  /** Called after every call with what it cost. */
  readonly onCall: (outcome: AgentOutcome) => Promise<void>;
  /** A call's answer as soon as the CLI prints it, its exit still to come (AgentRequest.onAnswer). */
  readonly onAnswer?: (text: string) => void;
}

export async function orchestrate(input: OrchestrateInput): Promise<OrchestrateOutcome> {
  const { config } = input;
  const maxAttempts = 1 + config.orchestrator.max_parse_retries_per_tick;
  let prompt = input.userPrompt;
  let costUsd = 0;
  let lastReason = '';
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    await input.onCallStart();
    const outcome = await input.runner.run(
      orchestratorRequest(config, {
        attempt,
        systemPrompt: input.systemPrompt,
        userPrompt: prompt,
        cwd: input.cwd,
        timeoutMs: Math.min(config.orchestrator.timeout_seconds * 1000, input.timeoutMs()),
        signal: input.signal,
        onAnswer: input.onAnswer,
      }),
      input.bus,
    );
    costUsd += outcome.costUsd;
    await input.onCall(outcome);
    // A2 rows 1-2: the call itself failed, or gave no result string.
    if (outcome.failure !== null || outcome.text === null) {
      return {
        kind: 'failed',
        failure: outcome.failure ?? 'no result',
        aborted: outcome.process.aborted,
        calls: attempt,
        costUsd,
      };
    }
    const parsed = parseModelJson(outcome.text, taskSchema);
    // A question is not a malformed task: asking again for JSON would only make it guess.
    const question = parsed.ok ? null : questionOf(outcome.text);
    if (question) return { kind: 'question', question, calls: attempt, costUsd };
    const refusal = parsed.ok ? (input.acceptTask?.(parsed.value) ?? null) : parsed.reason;
    if (parsed.ok && refusal === null) return { kind: 'task', task: parsed.value, calls: attempt, costUsd };
    // A2 rows 3-4: invalid task JSON; retry once with the reason, then block.
    lastReason = refusal ?? 'invalid task';
    input.bus.emit({
      type: 'log',
      level: 'warn',
      message: `orchestrator answer ${attempt}/${maxAttempts} rejected: ${lastReason}`,
    });
    prompt = `${input.userPrompt}\n\n=== RETRY ===\nYour previous answer was rejected by the runner: ${lastReason}\nReturn ONLY one JSON object that matches the task schema. No prose, no markdown.`;
  }
  return { kind: 'invalid', reason: lastReason, calls: maxAttempts, costUsd };
}

/** One orchestrator call: the same request whether it is run or only prestarted (`prestartOrchestrator`). */
export function orchestratorRequest(
  config: RelaisConfig,
  call: Pick<
    AgentRequest,
    'attempt' | 'systemPrompt' | 'userPrompt' | 'cwd' | 'timeoutMs' | 'signal' | 'onAnswer'
  >,
): AgentRequest {
  const agent = config.agents.orchestrator;
  return {
    ...call,
    role: 'orchestrator',
    model: agent.model,
    fallbackModel: agent.fallback_model,
    maxTurns: config.orchestrator.max_turns,
    maxBudgetUsd: config.orchestrator.max_budget_usd,
    tools: [],
    permissionMode: 'plan',
    streaming: false,
  };
}
