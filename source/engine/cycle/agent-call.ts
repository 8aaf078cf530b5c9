import type { AgentRequest } from '../agents/agent-run.js';
import type { AgentRole } from '../events.js';
import type { CycleRole } from '../protocol/cycle-policy.js';
import { oneLine } from '../workspace/printable.js';
import type { CycleContext } from './context.js';
import { describeSentinelError, type SentinelResult } from './sentinel.js';

/**
 * One agent call of the cycle, and the planner/verifier exchange of seed 003 "Format-Repair
 * Retry": parse with this cycle's nonce; on an error, one more call with the parser's error
 * (same nonce), then give up. The bus roles are the engine's existing ones: the planner shows as
 * the orchestrator, the implementer as the builder, the verifier as qa.
 */

const BUS_ROLE: Record<CycleRole, AgentRole> = {
  planner: 'orchestrator',
  implementer: 'builder',
  verifier: 'qa',
};

export interface Prompt {
  readonly system: string;
  readonly user: string;
}

export function agentRequest(ctx: CycleContext, role: CycleRole, prompt: Prompt, attempt = 1): AgentRequest {
  const timeouts = ctx.policy.timeouts;
  const base = {
    role: BUS_ROLE[role],
    attempt,
    systemPrompt: prompt.system,
    userPrompt: prompt.user,
    model: ctx.agents[role].model,
    fallbackModel: null,
    maxBudgetUsd: 5,
    cwd: ctx.root,
    signal: ctx.signal,
  };
  if (role === 'implementer')
    return {
      ...base,
      maxTurns: 60,
      tools: ['Read', 'Write', 'Edit', 'Glob', 'Grep', 'Bash'],
      permissionMode: 'bypassPermissions',
      streaming: true,
      timeoutMs: timeouts.implementer_seconds * 1000,
    };
  if (role === 'planner')
    return {
      ...base,
      maxTurns: 12,
      tools: ['Read', 'Glob', 'Grep'],
      permissionMode: 'plan',
      streaming: false,
      timeoutMs: timeouts.planner_seconds * 1000,
    };
  return {
    ...base,
    maxTurns: 1,
    tools: [],
    permissionMode: 'plan',
    streaming: false,
    timeoutMs: timeouts.verifier_seconds * 1000,
  };
}

export type BlockAnswer<T> =
  | { ok: true; value: T; attempts: number }
  | { ok: false; kind: 'agent'; detail: string }
  | { ok: false; kind: 'parse'; detail: string };

export async function askForBlock<T>(
  ctx: CycleContext,
  role: 'planner' | 'verifier',
  prompt: Prompt,
  parse: (text: string) => SentinelResult<T>,
): Promise<BlockAnswer<T>> {
  const runner = ctx.runners[role];
  const first = await runner.run(agentRequest(ctx, role, prompt, 1), ctx.bus);
  if (first.failure !== null || first.text === null)
    return { ok: false, kind: 'agent', detail: first.failure ?? 'no answer' };
  const parsed = parse(first.text);
  if (parsed.ok) return { ok: true, value: parsed.value, attempts: 1 };
  const error = describeSentinelError(parsed.error);
  ctx.bus.emit({
    type: 'log',
    level: 'warn',
    message: `${role} output rejected (${oneLine(error, 300)}); one format-repair retry`,
  });
  const repair: Prompt = {
    system: prompt.system,
    user: [
      prompt.user,
      '',
      '--- Your previous answer ---',
      capAnswer(first.text),
      '--- end of previous answer ---',
      '',
      `Your output could not be parsed. Error: ${error}. Please output ONLY the corrected block, no other text.`,
    ].join('\n'),
  };
  const second = await runner.run(agentRequest(ctx, role, repair, 2), ctx.bus);
  if (second.failure !== null || second.text === null)
    return { ok: false, kind: 'agent', detail: second.failure ?? 'no answer' };
  const again = parse(second.text);
  if (again.ok) return { ok: true, value: again.value, attempts: 2 };
  return {
    ok: false,
    kind: 'parse',
    detail: `after one format-repair retry: ${describeSentinelError(again.error)}`,
  };
}

/** How much of a rejected answer the repair prompt quotes: its start and its end (the block is often last). */
const REPAIR_QUOTE_CHARS = 8000;

function capAnswer(text: string): string {
  if (text.length <= REPAIR_QUOTE_CHARS) return text;
  const half = REPAIR_QUOTE_CHARS / 2;
  const left = text.length - REPAIR_QUOTE_CHARS;
  return `${text.slice(0, half)}\n[... ${left} characters of your answer left out ...]\n${text.slice(-half)}`;
}
