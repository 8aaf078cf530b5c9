import type { AgentOutcome, AgentRunner } from '../agents/agent-run.js';
import type { EngineBus } from '../events.js';
import { type BuilderResult, builderResultSchema } from '../protocol/builder-result.js';
import type { RelaisConfig } from '../protocol/config.js';
import { parseModelJson } from '../protocol/model-json.js';
import type { Task } from '../protocol/task.js';

/**
 * BUILD (seed 000 §9, Appendix A3): exactly one builder call, tools restricted with `--tools`,
 * stream-json read line by line. The builder's JSON is only its claim; the judge reads git.
 */

export interface BuildOutcome {
  readonly agent: AgentOutcome;
  /** A3 row 1: the call failed (process error, timeout, interrupt, API error). */
  readonly failure: string | null;
  readonly result: BuilderResult | null;
  /** Why the builder's answer is not a valid builder_result, when it is not. */
  readonly invalidReason: string | null;
}

export async function build(input: {
  config: RelaisConfig;
  task: Task;
  runner: AgentRunner;
  bus: EngineBus;
  systemPrompt: string;
  userPrompt: string;
  cwd: string;
  signal: AbortSignal;
  timeoutMs: number;
}): Promise<BuildOutcome> {
  const { config, task } = input;
  const agent = config.agents.builder;
  const tools = config.builder.claude_code.allowed_tools.split(',');
  const outcome = await input.runner.run(
    {
      role: 'builder',
      attempt: 1,
      systemPrompt: input.systemPrompt,
      userPrompt: input.userPrompt,
      model: agent.model,
      fallbackModel: agent.fallback_model,
      // The task may ask for fewer turns than the config allows, never more.
      maxTurns: Math.min(task.builder.max_turns, config.builder.claude_code.max_turns),
      maxBudgetUsd: config.builder.claude_code.max_budget_usd,
      tools,
      permissionMode: 'bypassPermissions',
      streaming: true,
      cwd: input.cwd,
      timeoutMs: input.timeoutMs,
      signal: input.signal,
    },
    input.bus,
  );
  if (outcome.failure !== null || outcome.text === null) {
    return { agent: outcome, failure: outcome.failure ?? 'no result', result: null, invalidReason: null };
  }
  const parsed = parseModelJson(outcome.text, builderResultSchema);
  return parsed.ok
    ? { agent: outcome, failure: null, result: parsed.value, invalidReason: null }
    : { agent: outcome, failure: null, result: null, invalidReason: parsed.reason };
}
