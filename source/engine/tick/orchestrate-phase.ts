import { checkTaskAgainstFence, type FenceCheck } from '../judge/config-fence.js';
import { splitNul } from '../judge/git.js';
import { IndexNotParsed, indexPathsLazily, keepIndexCopy } from '../judge/index-copy.js';
import { formatOfObjectId } from '../judge/object-guard.js';
import { builderResultSchema } from '../protocol/builder-result.js';
import { historyMetaSchema } from '../protocol/history-meta.js';
import { historyTallySchema } from '../protocol/history-tally.js';
import { inflightSchema } from '../protocol/inflight.js';
import { buildSchemasNow } from '../protocol/lazy-schema.js';
import { reportSchema } from '../protocol/report.js';
import { type BuildTask, isBuildTask, type Task, taskSchema } from '../protocol/task.js';
import { writeJsonAtomic } from '../workspace/atomic-write.js';
import { reserveCall, settleCall } from '../workspace/ledger.js';
import { orchestrate } from './orchestrate.js';
import { fillTemplate, orchestratorValues, readPrompt } from './prompts.js';
import type { TickContext } from './tick-context.js';

/**
 * ORCHESTRATE (Appendix A2): a task to build, or null when the tick ends here (a STOP/BLOCKED
 * outcome, a milestone-mode stop, or a control decision), with the outcome recorded.
 */
export async function proposeTask(
  ctx: TickContext,
  onAnswer?: (text: string) => void,
): Promise<BuildTask | null> {
  const { setup, record, ledger } = ctx;
  const maxCost = setup.config.orchestrator.max_budget_usd;
  const [values, systemPrompt, userTemplate] = await Promise.all([
    orchestratorValues({
      config: setup.config,
      paths: setup.paths,
      git: setup.git,
      facts: setup.facts,
      state: ledger.state,
      goal: ctx.options.goal,
    }),
    readPrompt(setup.paths, 'orchestrator.system.txt'),
    readPrompt(setup.paths, 'orchestrator.user.txt'),
  ]);
  const outcome = await orchestrate({
    config: setup.config,
    runner: ctx.runner,
    bus: ctx.options.bus,
    systemPrompt,
    userPrompt: fillTemplate(userTemplate, values),
    cwd: setup.facts.root,
    signal: ctx.signal,
    timeoutMs: () => ctx.remainingMs(),
    // The call's maximum is reserved before it starts and replaced by the reported cost after it:
    // a call killed before Claude Code reported its cost stays held at its --max-budget-usd
    // against the caps, marked as a reservation of unknown cost, not as money spent.
    onCallStart: async () => {
      // Once the call is under way the runner has time to spare: the schemas it reads and writes
      // between the two agents and after the builder are built meanwhile, not on that path.
      if (record.orchestrator.calls === 0) setImmediate(buildTickSchemas);
      record.orchestrator.calls++;
      record.orchestrator.costUsd += maxCost;
      record.orchestrator.unreportedUsd += maxCost;
      record.orchestrator.unreportedCalls++;
      await ledger.add({ orchestrator_calls: 1, ...reserveCall(maxCost) });
    },
    acceptTask: (task) => taskPolicy(ctx, task),
    onAnswer,
    onCall: async (call) => {
      if (!call.costReported) return;
      record.orchestrator.costUsd += call.costUsd - maxCost;
      record.orchestrator.unreportedUsd -= maxCost;
      record.orchestrator.unreportedCalls--;
      await ledger.add(settleCall(maxCost, call));
    },
  });
  if (outcome.kind === 'failed') {
    // A2 rows 1-2.
    record.code = 'STOP_INTERRUPTED';
    record.detail = `orchestrator: ${ctx.interruption() ?? outcome.failure}`;
    record.orchestrator.error = outcome.failure;
    return null;
  }
  if (outcome.kind === 'question') {
    // Issue 15: a human must answer; the ticks engine raises the question gate with it.
    record.code = 'BLOCKED_ORCHESTRATOR_QUESTION';
    record.detail = `the orchestrator asked instead of proposing a task: ${outcome.question}`.slice(0, 2000);
    record.orchestrator.question = outcome.question;
    return null;
  }
  if (outcome.kind === 'invalid') {
    // A2 rows 3-4: invalid after the one allowed retry.
    record.code = 'BLOCKED_ORCHESTRATOR_OUTPUT_INVALID';
    record.detail = `orchestrator output invalid after ${outcome.calls} attempt(s): ${outcome.reason}`;
    record.orchestrator.error = outcome.reason;
    return null;
  }
  record.task = outcome.task;
  await writeJsonAtomic(setup.paths.task, taskSchema, outcome.task);
  ctx.options.bus.emit({
    type: 'task.proposed',
    task_id: outcome.task.task_id,
    milestone_id: outcome.task.milestone_id,
    task_kind: outcome.task.task_kind,
    intent: outcome.task.intent,
    mode: isBuildTask(outcome.task) ? outcome.task.builder.mode : 'control',
  });
  const expected = ctx.options.holdMilestone ? ledger.state.milestone_id : null;
  if (expected !== null && outcome.task.milestone_id !== expected) {
    // Seed 001 PR2, milestone mode: a safety stop before anything is built for another milestone.
    record.code = 'STOP_MILESTONE_CHANGED';
    record.detail = `the orchestrator moved from milestone ${expected} to ${outcome.task.milestone_id}`;
    return null;
  }
  await ledger.enterMilestone(outcome.task.milestone_id);
  if (!isBuildTask(outcome.task)) {
    // Seed 001 PR6: a control decision instead of a build; the tick succeeds without a builder.
    record.control = outcome.task.control;
    return null;
  }
  const fence = await fenceCheck(setup, outcome.task.scope.allowed_globs);
  if (fence.excluded.length === outcome.task.scope.allowed_globs.length) {
    // Issue 21 item 4: nothing the task may touch is inside the fence. Refused before the builder
    // is paid for; the fix is in the config.
    record.code = 'STOP_SCOPE_OUTSIDE_CONFIG';
    record.detail = `the task's scope ${fence.excluded.join(', ')} lies outside scope.default_allowed_globs in relais.config.json; effective fence: ${fence.effective}`;
    return null;
  }
  if (fence.excluded.length > 0)
    record.warnings.push(
      `task globs ${fence.excluded.join(', ')} lie outside scope.default_allowed_globs; effective fence: ${fence.effective}`,
    );
  return outcome.task;
}

/**
 * The task's globs against the config's fence, over the tracked paths read from `.git/index`
 * itself (issue 17: no `git ls-files` process, and the index decoded only as far as the check
 * reads). A split index, version 4, a sparse index or bytes that do not parse exactly ask git, as
 * before. Only this check reads them: the judge decides scope from git after BUILD whatever it says.
 */
export function fenceCheck(setup: TickContext['setup'], taskAllowed: readonly string[]): Promise<FenceCheck> {
  // The builder's prestart checks the same task first (prestart-agents.ts): once is enough.
  const key = JSON.stringify(taskAllowed);
  const checks = fenceChecks.get(setup) ?? new Map<string, Promise<FenceCheck>>();
  fenceChecks.set(setup, checks);
  let checked = checks.get(key);
  if (checked === undefined) {
    checked = readFenceCheck(setup, taskAllowed);
    checks.set(key, checked);
  }
  return checked;
}

/** Fence checks by tick (its setup) and task globs. */
const fenceChecks = new WeakMap<TickContext['setup'], Map<string, Promise<FenceCheck>>>();

async function readFenceCheck(
  setup: TickContext['setup'],
  taskAllowed: readonly string[],
): Promise<FenceCheck> {
  const check = (paths: Iterable<string>) =>
    checkTaskAgainstFence(taskAllowed, setup.config.scope.default_allowed_globs, paths);
  const format = formatOfObjectId(setup.facts.head);
  const index = format ? await keepIndexCopy(setup.facts.gitDir) : null;
  const fromIndex = index ? indexPathsLazily(index.bytes, format === 'sha256' ? 32 : 20) : null;
  if (fromIndex) {
    try {
      return check(fromIndex);
    } catch (error) {
      if (!(error instanceof IndexNotParsed)) throw error;
    }
  }
  return check(splitNul(await setup.git.ok(['ls-files', '-z'])));
}

/** Every schema the tick first uses after its orchestrator's call (issue 17). */
function buildTickSchemas(): void {
  buildSchemasNow([
    taskSchema,
    inflightSchema,
    builderResultSchema,
    reportSchema,
    historyMetaSchema,
    historyTallySchema,
  ]);
}

/** What the schema cannot know: which builder modes this project enables, and their budgets. */
function taskPolicy(ctx: TickContext, task: Task): string | null {
  if (!isBuildTask(task)) return null;
  const { config } = ctx.setup;
  if (task.builder.mode === 'patch') {
    if (!config.builder.allow_patch_mode)
      return 'builder.mode "patch" is disabled in relais.config.json (builder.allow_patch_mode); use "claude_code"';
    const cap = config.builder.patch.max_patch_attempts_per_milestone;
    if (ctx.ledger.state.budgets.patch_attempts >= cap)
      return `the milestone used its ${cap} patch attempts; use "claude_code"`;
  }
  if (task.builder.mode === 'cursor' && config.builder.cursor === null)
    return 'builder.mode "cursor" needs a builder.cursor driver in relais.config.json; use "claude_code"';
  return null;
}
