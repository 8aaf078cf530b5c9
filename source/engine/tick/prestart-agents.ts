import type { AgentRunner } from '../agents/agent-run.js';
import type { IgnoredSnapshot } from '../judge/ignored-files.js';
import { worktreeStatus } from '../judge/repo.js';
import { parseModelJson } from '../protocol/model-json.js';
import { isBuildTask, taskSchema } from '../protocol/task.js';
import { writableFoldersSettled, writableInTree } from '../sandbox/sandbox.js';
import { snapshotIgnoredFor } from '../session/judge-phase.js';
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
 * The orchestrator's CLI, started while the tick reads its last start conditions and prepares its
 * call (the ledger, the run's history folder, the prompt's values). Only once the tree is found
 * clean (preflight's row 4): the command is the committed config's, and a dirty tree starts
 * nothing. A tick refused after that ends it before any call, so it never gets a prompt. Returns
 * what ends it if no call came.
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
 * task in claude_code mode for the claude provider inside the config's fence, and never in a tick
 * already cut short. Each hint the tick does not follow (the orchestrator exits non-zero, a retry,
 * a refusal, a stop) leaves the process unadopted, to be ended.
 *
 * The build guards are taken while it loads, and it has no prompt yet, but it is the builder's
 * command in the builder's sandbox, which can write the task's folders and nothing of git's or of
 * the workspace. What it writes there git sees, and the judge compares with HEAD, not with the
 * guards; the ignored files of those folders, which only the guards' picture can show changed,
 * are pictured here, before it starts, and the guards take that picture and count what is made
 * from its time on as the tick's (`takeBuildGuards`). Only for folders that all exist: those it
 * is bound to are then the ones the build reads (`writableFoldersSettled`). (With
 * `sandbox.writable_outside` the picture is of the whole tree, and the orchestrator's CLI, still
 * exiting, could write through a hard link there: a CLI in plan mode with no tools writes nothing.)
 */
export function prestartBuilderOnAnswer(ctx: TickContext, text: string): void {
  const { setup } = ctx;
  if (ctx.builderAhead !== null || setup.config.agents.builder.provider !== 'claude') return;
  if (!ctx.runner.prestart || setup.sandbox.kind !== 'bwrap' || ctx.signal.aborted) return;
  // A value, never a throw (a hint must not break the call it came from).
  const parsed = parseModelJson(text, taskSchema);
  if (!parsed.ok || !isBuildTask(parsed.value) || parsed.value.builder.mode !== 'claude_code') return;
  const task = parsed.value;
  const ignored = (async () => {
    // A folder of the task that does not exist yet widens its binds to the parent, and what the
    // build reads later would be narrower than what this process could write: no prestart then.
    if (!writableFoldersSettled(setup.sandbox, setup.facts.root, task.scope.allowed_globs)) return null;
    // The set prepareBuild computes for a builder with no driver output file (claude provider).
    const writable = writableInTree(setup.sandbox, setup.facts.root, task.scope.allowed_globs);
    const atMs = Date.now();
    // The picture is read (by git, in a process of its own) while the fence is checked here: both
    // only read, and a task the fence refuses leaves the picture unused (each awaited whatever the
    // other does: nothing of either outlives this hint).
    const [fence, snapshot] = await Promise.allSettled([
      fenceCheck(setup, task.scope.allowed_globs),
      snapshotIgnoredFor(setup, writable),
    ]);
    if (fence.status === 'rejected') throw fence.reason;
    // STOP_SCOPE_OUTSIDE_CONFIG follows: no builder for it.
    if (fence.value.excluded.length === task.scope.allowed_globs.length || ctx.signal.aborted) return null;
    if (snapshot.status === 'rejected') throw snapshot.reason;
    return { writable: JSON.stringify(writable), snapshot: snapshot.value, atMs };
  })().catch(() => null);
  const started = ignored.then(async (taken) => {
    if (taken === null || ctx.signal.aborted) return null;
    // Not part of what is started: the prompt goes to stdin when the build's call adopts it.
    return (await ctx.runner.prestart?.(await builderRequest(ctx, task, ''))) ?? null;
  });
  ctx.builderAhead = { ignored, process: started.catch(() => null) };
}

/**
 * The ignored files pictured before the builder's prestart (and when), for the guards of its build;
 * null when there was no prestart. Throws when the build's writable set is not the one pictured
 * (`writableFoldersSettled` says why it cannot be): the guards could not show what that process
 * wrote, so the tick stops rather than judge without them.
 */
export async function ignoredTakenAhead(
  ctx: TickContext,
  writable: readonly string[] | null,
): Promise<{ snapshot: IgnoredSnapshot; atMs: number } | null> {
  const taken = await ctx.builderAhead?.ignored;
  if (!taken) return null;
  if (taken.writable !== JSON.stringify(writable))
    throw new Error(
      `the task's writable folders moved after its builder was started (${taken.writable} -> ${JSON.stringify(writable)})`,
    );
  return taken;
}

/**
 * Ends the builder's process if no call adopted it (a tick that stopped before its build, or a
 * build that started its own). Never throws: the tick's own outcome stands.
 */
export async function discardPrestartedBuilder(ctx: TickContext): Promise<void> {
  await (await ctx.builderAhead?.process)?.discard().catch(() => undefined);
}

/**
 * After `discardPrestartedBuilder`, in a tick whose build never ran (so never judged, never rolled
 * back): what git shows changed in the folders its builder's CLI could write. No guards were taken
 * for it, so nothing was put back; said in the report rather than left for the next preflight to
 * find. (Claude Code writes nothing there before its prompt; another CLI could, while it loads.)
 * Once a build ran, what it left is the judge's and the rollback's, and git is not asked here
 * (a git folder the builder replaced must not be run). Never throws.
 */
export async function changesLeftUnbuilt(ctx: TickContext): Promise<string[]> {
  const { record, setup } = ctx;
  const built = record.builder.outcome !== null || record.judge !== null || record.rollback.performed;
  if (built || !(await ctx.builderAhead?.process)) return [];
  const taken = await ctx.builderAhead?.ignored;
  if (!taken) return [];
  const writable = JSON.parse(taken.writable) as string[] | null;
  return worktreeStatus(setup.git, writable ?? undefined)
    .then((entries) => entries.map((entry) => entry.slice(3)))
    .catch(() => []);
}
