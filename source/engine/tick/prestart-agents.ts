import type { AgentRunner } from '../agents/agent-run.js';
import { parseModelJson } from '../protocol/model-json.js';
import { isBuildTask, taskSchema } from '../protocol/task.js';
import { builderRequest } from './build.js';
import { orchestratorRequest } from './orchestrate.js';
import { fenceCheck } from './orchestrate-phase.js';
import { readPrompt } from './prompts.js';
import type { TickContext } from './tick-context.js';

/**
 * Agent CLIs started before their calls (issue 17): Claude Code spends 150-200 ms loading itself
 * before it reads its prompt, and the tick has work of its own to do meanwhile. A call adopts the
 * process only if it is exactly the one the call would start (program, argv, folder, environment,
 * sandbox), and only then writes the prompt; nothing else reaches it, nothing is counted or shown
 * before the call, and an unadopted process is killed whole (at the tick's end, or by the process
 * port once it has waited 2 s). Only in the OS sandbox: there the process is fenced exactly as its
 * call would be, and the judge reads git after the build whatever ran before it.
 */

/**
 * The orchestrator's CLI, started while the tick prepares its call (the ledger, the run's history
 * folder, the prompt's values). Only once the start conditions are met: a refused tick starts no
 * agent, and the command is the committed config's. Returns what ends it if no call came.
 */
export async function prestartOrchestrator(
  setup: TickContext['setup'],
  runner: AgentRunner,
  signal: AbortSignal,
): Promise<() => Promise<void>> {
  const nothing = async () => undefined;
  if (!runner.prestart || setup.sandbox.kind !== 'bwrap' || signal.aborted) return nothing;
  const systemPrompt = await readPrompt(setup.paths, 'orchestrator.system.txt').catch(() => null);
  if (systemPrompt === null) return nothing;
  const request = orchestratorRequest(setup.config, {
    attempt: 1,
    systemPrompt,
    // Not part of what is started: the prompt goes to stdin when the call adopts the process.
    userPrompt: '',
    cwd: setup.facts.root,
    timeoutMs: setup.config.orchestrator.timeout_seconds * 1000,
    signal,
  });
  // Not awaited: the spawn goes on while the tick prepares the call (the call waits for it).
  const started = runner.prestart(request).catch(() => null);
  return async () => {
    await (await started)?.discard();
  };
}

/**
 * The builder's CLI, started as soon as the orchestrator has printed a task it could build: it
 * loads while the orchestrator's CLI exits (35-60 ms after its answer) and the tick counts the
 * call, checks the task and takes the build guards. Only the first such answer of a tick, only a
 * task in claude_code mode inside the config's fence, and never in a tick already cut short. Each
 * hint the tick does not follow (the orchestrator exits non-zero, a retry, a refusal, a stop)
 * leaves the process unadopted, to be ended.
 *
 * The guards are taken while it loads, so what it wrote before them would be in their picture:
 * it has no prompt yet (no model has said anything to it), its sandbox makes only the task's
 * folders writable, and the judge compares tracked and untracked files with HEAD, not with the
 * guards. What is left, an ignored file in the task's folders written by the CLI's own start-up,
 * Claude Code does not do (docs/performance.md, twelfth pass: no file of the repository is opened
 * for writing by a prestarted claude).
 */
export function prestartBuilderOnAnswer(ctx: TickContext, text: string): void {
  if (ctx.prestartedBuilder !== null) return;
  if (!ctx.runner.prestart || ctx.setup.sandbox.kind !== 'bwrap' || ctx.signal.aborted) return;
  // A value, never a throw (a hint must not break the call it came from).
  const parsed = parseModelJson(text, taskSchema);
  if (!parsed.ok || !isBuildTask(parsed.value) || parsed.value.builder.mode !== 'claude_code') return;
  const task = parsed.value;
  ctx.prestartedBuilder = (async () => {
    const fence = await fenceCheck(ctx.setup, task.scope.allowed_globs);
    // STOP_SCOPE_OUTSIDE_CONFIG follows: no builder for it.
    if (fence.excluded.length === task.scope.allowed_globs.length || ctx.signal.aborted) return null;
    // Not part of what is started: the prompt goes to stdin when the build's call adopts it.
    return (await ctx.runner.prestart?.(await builderRequest(ctx, task, ''))) ?? null;
  })().catch(() => null);
}

/** Ends the builder's process if no call adopted it (a tick that stopped before its build). */
export async function discardPrestartedBuilder(ctx: TickContext): Promise<void> {
  await (await ctx.prestartedBuilder)?.discard();
}
