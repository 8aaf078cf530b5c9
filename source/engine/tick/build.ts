import { resolve } from 'node:path';
import type { AgentRequest } from '../agents/agent-run.js';
import { hookRefusalIn, type WriteFence } from '../agents/claude-code/scope-hook.js';
import { runDriver } from '../agents/external/run-driver.js';
import { findExecutable } from '../agents/find-executable.js';
import { questionOf } from '../agents/needs-input.js';
import { applyPatch, pathsGitSees } from '../agents/patch/apply-patch.js';
import { validatePatch } from '../agents/patch/validate-patch.js';
import { type BuilderResult, builderResultSchema } from '../protocol/builder-result.js';
import type { Code } from '../protocol/codes.js';
import { parseModelJson } from '../protocol/model-json.js';
import type { BuildTask } from '../protocol/task.js';
import { sandboxRefusalIn } from '../sandbox/refusal.js';
import { agentSandbox, sandboxForTree, verificationSandbox, writableFolders } from '../sandbox/sandbox.js';
import { effectiveScopeFor } from '../session/judge-phase.js';
import { recordAgentInFlight } from '../session/recover.js';
import type { ProcessResult } from '../supervise/run-process.js';
import { CONFIG_FILE_NAME } from '../workspace/paths.js';
import { builderValues, fillTemplate, readPrompt } from './prompts.js';
import type { TickContext } from './tick-context.js';

/**
 * BUILD (seed 000 §9, Appendix A3; seed 001 PR4-PR5): exactly one builder run, in the mode the
 * task names. Whatever a builder says is only its claim; the judge reads git afterwards.
 */

export interface BuildOutcome {
  readonly costUsd: number;
  /** False when Claude Code died before reporting its cost (the reserved maximum then stands). */
  readonly costReported?: boolean;
  /** The run failed (A3 row 1), or a mode refused the task before writing anything. */
  readonly failure: { readonly code: Code; readonly detail: string } | null;
  readonly result: BuilderResult | null;
  /** Why the builder's answer is not a valid builder_result, when it is not. */
  readonly invalidReason: string | null;
  /**
   * The builder answered with a question for the human instead of its result (issue 15): the
   * workflow raises the question gate rather than retrying STOP_BUILDER_OUTPUT_INVALID.
   */
  readonly question?: string | null;
}

export function build(ctx: TickContext, task: BuildTask): Promise<BuildOutcome> {
  switch (task.builder.mode) {
    case 'claude_code':
      return buildWithClaude(ctx, task);
    case 'patch':
      return buildWithPatch(ctx, task, task.builder.patch);
    case 'cursor':
      return buildWithDriver(ctx, task);
  }
}

/** How a tick's warning about a write the scope hook refused begins (counted for the Blast radius panel). */
export const REFUSED_WARNING = 'builder write refused before it happened: ';

/**
 * The builder's call for a task, its prompt aside: the same request whether it is run or only
 * prestarted (`prestartBuilderOnAnswer`), so a prestarted process is the one its call would start.
 */
export async function builderRequest(
  ctx: TickContext,
  task: BuildTask,
  userPrompt: string,
): Promise<AgentRequest> {
  const { setup } = ctx;
  const agent = setup.config.agents.builder;
  return {
    role: 'builder',
    attempt: 1,
    systemPrompt: await readPrompt(setup.paths, 'builder.system.txt'),
    userPrompt,
    model: agent.model,
    fallbackModel: agent.fallback_model,
    // The task may ask for fewer turns than the config allows, never more.
    maxTurns: Math.min(task.builder.max_turns, setup.config.builder.claude_code.max_turns),
    maxBudgetUsd: setup.config.builder.claude_code.max_budget_usd,
    tools: builderTools(setup.config.builder.claude_code.allowed_tools, task),
    permissionMode: 'bypassPermissions',
    streaming: true,
    cwd: setup.facts.root,
    writableGlobs: task.scope.allowed_globs,
    writeFence: writeFenceFor(ctx, task),
    timeoutMs: ctx.remainingMs(),
    signal: ctx.signal,
  };
}

async function buildWithClaude(ctx: TickContext, task: BuildTask): Promise<BuildOutcome> {
  const { setup } = ctx;
  const refusals: string[] = [];
  const userPrompt = fillTemplate(
    await readPrompt(setup.paths, 'builder.user.txt'),
    builderValues(task, effectiveScopeFor(setup, task)),
  );
  const outcome = await ctx.runner.run(
    {
      ...(await builderRequest(ctx, task, userPrompt)),
      onSpawn: (pgid) => recordAgent(ctx, pgid),
      // Refused by the scope hook before the write: the model was told; the report says so too,
      // and the workflow credits no task with this step (docs/workflow.md).
      onOutputLine: (line) => {
        const refused = hookRefusalIn(line);
        if (refused !== null && refusals.length < 20) refusals.push(refused);
      },
    },
    ctx.options.bus,
  );
  ctx.record.refusedWrites.push(...refusals);
  for (const line of refusals) ctx.record.warnings.push(`${REFUSED_WARNING}${line}`);
  await settleAgentRecord(ctx);
  if (outcome.failure !== null || outcome.text === null) {
    return {
      costUsd: outcome.costUsd,
      costReported: outcome.costReported,
      failure: failedRun(ctx, task, outcome.failure ?? 'no result', outcome.process, outcome.errorText),
      result: null,
      invalidReason: null,
    };
  }
  return judgeClaim(outcome.costUsd, outcome.text);
}

/**
 * The configured tools, plus Claude Code's Write when the task may create files: Edit cannot make
 * a new file, and the scope hook guards Write as it guards Edit (the path must be inside the task's
 * and the config's globs). A task without new files keeps the configured set exactly.
 */
export function builderTools(configured: string, task: BuildTask): string[] {
  const tools = configured
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t.length > 0);
  return task.scope.allow_new_files && !tools.includes('Write') ? [...tools, 'Write'] : tools;
}

/**
 * A builder run that ended without a result (A3 row 1). When it ran in the sandbox, ended on its
 * own (no signal, timeout or abort from us) and its error output shows a refused write, it was
 * fenced, not interrupted: STOP_SANDBOX_WRITE_REFUSED with the line that shows it (issue 14).
 * Never SUCCESS: the work it claimed may be exactly the write that did not happen.
 */
function failedRun(
  ctx: TickContext,
  task: BuildTask,
  detail: string,
  process: ProcessResult,
  errorText: string | null,
): { code: Code; detail: string } {
  const endedOnItsOwn = !process.aborted && !process.timedOut && process.spawnError === null;
  const { sandbox } = ctx.setup;
  const writable = sandbox.kind === 'bwrap' ? writableFolders(sandbox, task.scope.allowed_globs) : null;
  const refused =
    writable && endedOnItsOwn
      ? (sandboxRefusalIn(process.stderrTail, writable) ?? sandboxRefusalIn(errorText, writable))
      : null;
  if (refused)
    return {
      code: 'STOP_SANDBOX_WRITE_REFUSED',
      detail: `${detail}; the sandbox refused a write: ${refused}`,
    };
  // The builder's time is the tick's: its own timeout fires just before the tick's deadline.
  const deadline = `tick exceeded runner.max_tick_seconds (${ctx.setup.config.runner.max_tick_seconds}s)`;
  return { code: 'STOP_INTERRUPTED', detail: process.timedOut ? `${deadline}: ${detail}` : detail };
}

/**
 * What Claude Code's own scope hook refuses before the write: the judge's fence (task AND config
 * allowed globs, the forbidden ones, git internals, relais/ and the config file), so the first
 * fence never lets through what the second would stop.
 */
function writeFenceFor(ctx: TickContext, task: BuildTask): WriteFence {
  const scope = effectiveScopeFor(ctx.setup, task);
  return {
    allowed: [scope.taskAllowed, scope.configAllowed],
    names: ["this task's scope.allowed_globs", "the config's scope.default_allowed_globs"],
    forbidden: [...scope.forbidden, CONFIG_FILE_NAME],
  };
}

/** The agent's process group, written while it runs (not awaited: the agent must not wait on it). */
const pendingRecords = new WeakMap<TickContext, Promise<void>>();

function recordAgent(ctx: TickContext, pgid: number): void {
  // Best effort: a crash recovery without it only loses the chance to end an orphaned agent.
  pendingRecords.set(
    ctx,
    recordAgentInFlight(ctx.setup.paths, pgid).catch(() => undefined),
  );
}

/**
 * The record's write must be over before the judge compares the workspace: a fast agent ends
 * before it, and its half-written temp file would look like the builder's own.
 */
async function settleAgentRecord(ctx: TickContext): Promise<void> {
  await pendingRecords.get(ctx);
}

function judgeClaim(costUsd: number, text: string): BuildOutcome {
  const parsed = parseModelJson(text, builderResultSchema);
  return parsed.ok
    ? { costUsd, failure: null, result: parsed.value, invalidReason: null }
    : { costUsd, failure: null, result: null, invalidReason: parsed.reason, question: questionOf(text) };
}

/** PR4: refused before git runs unless every path passes; then git's own reading is checked too. */
async function buildWithPatch(ctx: TickContext, task: BuildTask, patch: string): Promise<BuildOutcome> {
  const { setup, options } = ctx;
  const rules = {
    root: setup.facts.root,
    scope: effectiveScopeFor(setup, task),
    runnerOwnedGlobs: [CONFIG_FILE_NAME, setup.paths.relDir, `${setup.paths.relDir}/**`],
  };
  const refuse = (code: Code, problems: string[]): BuildOutcome => ({
    costUsd: 0,
    failure: { code, detail: `patch refused before it was applied: ${problems.slice(0, 5).join('; ')}` },
    result: null,
    invalidReason: null,
  });
  options.bus.emit({
    type: 'agent.started',
    role: 'builder',
    attempt: 1,
    command: 'git apply',
    model: 'patch',
  });
  const ours = await validatePatch(patch, rules);
  if (!ours.ok) return refuse(ours.code, ours.problems);
  // Second opinion: the paths git itself reads from the patch must pass the same rules.
  const seen = await pathsGitSees(setup.git, patch);
  if (!seen.ok) return refuse('STOP_PATCH_INVALID', [seen.error]);
  const theirs = await validatePatch(patch, rules, seen.paths);
  if (!theirs.ok) return refuse(theirs.code, theirs.problems);
  // In the sandbox: writable only in the task's folders, no network (the patch is data, not an agent).
  const applied = await applyPatch(
    setup.git,
    patch,
    verificationSandbox(sandboxForTree(setup.sandbox, setup.facts.root), task.scope.allowed_globs),
  );
  options.bus.emit({
    type: 'agent.finished',
    role: 'builder',
    ok: applied.ok,
    exit_code: applied.ok ? 0 : 1,
    cost_usd: 0,
    duration_ms: 0,
    summary: applied.ok ? 'patch applied' : applied.error,
  });
  if (!applied.ok)
    return {
      costUsd: 0,
      failure: { code: 'STOP_PATCH_INVALID', detail: applied.error },
      result: null,
      invalidReason: null,
    };
  return {
    costUsd: 0,
    failure: null,
    result: {
      summary: `applied the task patch (${theirs.paths.length} path(s))`.slice(0, 800),
      files_intended: theirs.paths.slice(0, 200),
      commands_ran: ['git apply'],
      notes: [],
    },
    invalidReason: null,
  };
}

/** PR5: the driver's timeout kills its whole tree (STOP_BUILDER_TIMEOUT); its edits are judged. */
async function buildWithDriver(ctx: TickContext, task: BuildTask): Promise<BuildOutcome> {
  const { setup, options } = ctx;
  const driver = setup.config.builder.cursor;
  if (!driver)
    return {
      costUsd: 0,
      failure: { code: 'STOP_INTERRUPTED', detail: 'no builder.cursor driver is configured' },
      result: null,
      invalidReason: null,
    };
  const command = await findExecutable(driver.command, options.env, setup.facts.root);
  if (!command)
    return {
      costUsd: 0,
      failure: { code: 'STOP_INTERRUPTED', detail: `builder driver "${driver.command}" was not found` },
      result: null,
      invalidReason: null,
    };
  const outputFile = resolve(setup.facts.root, driver.output_file);
  const run = await runDriver({
    driver,
    command,
    root: setup.facts.root,
    taskFile: setup.paths.task,
    outputFile,
    env: options.env,
    bus: options.bus,
    signal: ctx.signal,
    remainingMs: ctx.remainingMs(),
    onSpawn: (pgid) => recordAgent(ctx, pgid),
    sandbox: agentSandbox(setup.sandbox, task.scope.allowed_globs, [outputFile], 'builder'),
  });
  await settleAgentRecord(ctx);
  if (run.timedOut) {
    return {
      costUsd: 0,
      failure: {
        code: 'STOP_BUILDER_TIMEOUT',
        detail: `driver ran past ${driver.timeout_seconds}s and was killed with its process tree`,
      },
      result: null,
      invalidReason: null,
    };
  }
  if (run.process.spawnError || run.process.aborted || run.process.timedOut || run.process.exitCode !== 0) {
    const how = run.process.spawnError
      ? `could not start (${run.process.spawnError})`
      : `exited with ${run.process.exitCode ?? run.process.signal}`;
    return {
      costUsd: 0,
      failure: failedRun(ctx, task, `builder driver ${how}`, run.process, null),
      result: null,
      invalidReason: null,
    };
  }
  if (!run.output.ok) {
    const why =
      run.output.reason === 'missing'
        ? `the driver wrote no ${driver.output_file}`
        : `${driver.output_file} ${run.output.reason}`;
    return { costUsd: 0, failure: null, result: null, invalidReason: why };
  }
  return judgeClaim(0, run.output.text);
}
