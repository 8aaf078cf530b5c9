import { testCommandOf } from '../supervise/breaker-settings.js';
import { readAgentPrompt, runAgentPhase } from './agent-phase.js';
import { type CheckedTree, checksOnHeldTree } from './checked-tree.js';
import type { PhaseResult, WorkflowContext } from './context.js';
import { fill, readProjectFile, readTasksFile, SPEC_FILE, TASKS_FILE } from './phase-helpers.js';
import { describeRuns, runProjectChecks } from './project-checks.js';
import { singleWritableGlobs } from './single-writable.js';
import { recordTasks } from './spec-phase.js';

/**
 * IMPLEMENTATION with the `single` engine (seed 002 §3.2): one dev-agent invocation works through
 * every pending task of TASKS.md and ends on EXIT_SIGNAL. Its "done" counts only when TASKS.md
 * shows every task completed and the project's own checks pass, run by the runner; the judge then
 * holds the whole change to the configured scope before it is committed.
 */
export async function implementSingle(ctx: WorkflowContext): Promise<PhaseResult> {
  const { workflow, scope } = ctx.setup.config;
  // The tree of the last checks that passed: the commit must record exactly that one (issue 14).
  let passedOn: CheckedTree | null = null;
  const template = await readAgentPrompt(ctx, 'dev.txt');
  const outcome = await runAgentPhase(ctx, {
    role: 'dev',
    phase: 'IMPLEMENTATION',
    phaseTimeoutSeconds: workflow.timeouts.implementation,
    // The one dev-agent run is bounded by the phase, not by the per-run agent timeout.
    runTimeoutMs: workflow.timeouts.implementation * 1000,
    maxTurns: workflow.max_turns.dev,
    scope: {
      allowed: [...scope.default_allowed_globs, TASKS_FILE],
      allowNewFiles: true,
      allowLockfileChanges: scope.default_allow_lockfile_changes,
      maxFiles: workflow.single_max_files_touched,
      maxLines: workflow.single_max_lines_changed,
    },
    // The sandbox's fence: the scopes of the tasks it works on, not the whole config fence.
    writable: () => singleWritableGlobs(ctx),
    commitMessage: `ralphy: implementation of "${ctx.prd.title}" (dev-agent)`,
    prompt: async (note) =>
      fill(template, {
        TASKS_FILE,
        SPEC_FILE,
        SPEC: await readProjectFile(ctx, SPEC_FILE, 30_000),
        TASKS: await readProjectFile(ctx, TASKS_FILE, 30_000),
        TEST_COMMAND: testCommandOf(ctx.setup.config) ?? 'the project tests',
        NOTE: note ?? '',
      }),
    verifyDone: async () => {
      const found = await implementationProblem(ctx);
      passedOn = found.checked;
      return found.problem;
    },
    verifiedTree: () => passedOn,
    onTasks: async (tasks) => {
      await recordTasks(ctx, tasks);
      for (const task of tasks.filter((t) => t.status === 'completed'))
        await ctx.updateTask(task.number, { claimed: 'the dev-agent marked it completed' });
    },
  });
  if (outcome.kind === 'end') return outcome.result;
  // The checks ran on the tree the judge then committed: that commit is what they verified.
  const commit = outcome.run.commit ?? ctx.setup.facts.head;
  const runs = ctx.workflow.verification?.runs ?? [];
  if (ctx.workflow.verification) await ctx.update({ verification: { commit, runs } });
  const verified =
    runs.length > 0
      ? `checks on ${commit.slice(0, 12)}: ${describeRuns(runs)}`
      : `committed ${commit.slice(0, 12)}; no parameter-free verification template is configured`;
  for (const task of ctx.workflow.tasks)
    await ctx.updateTask(task.number, {
      status: 'completed',
      claimed: task.claimed ?? 'the dev-agent marked it completed',
      verified,
      verdict: 'verified',
      commits: outcome.run.commit ? [outcome.run.commit] : task.commits,
    });
  return { kind: 'next', event: 'exit_signal' };
}

/**
 * Why the dev-agent's "done" is not believed yet: tasks left, or a failing check; and, when the
 * checks passed, the tree they passed on.
 */
async function implementationProblem(
  ctx: WorkflowContext,
): Promise<{ problem: string | null; checked: CheckedTree | null }> {
  const parsed = await readTasksFile(ctx);
  if (!parsed.ok)
    return {
      problem: `${TASKS_FILE} does not parse any more: ${parsed.problems.slice(0, 3).join('; ')}`,
      checked: null,
    };
  await recordTasks(ctx, parsed.tasks);
  const open = parsed.tasks.filter((t) => t.status !== 'completed');
  if (open.length > 0) {
    const listed = open
      .slice(0, 5)
      .map((t) => `${t.number}. ${t.title}`)
      .join(', ');
    return {
      problem: `${TASKS_FILE} still shows ${open.length} task(s) not completed: ${listed}`,
      checked: null,
    };
  }
  const { git, facts } = ctx.setup;
  const { result: checks, checked } = await checksOnHeldTree(git, facts.gitDir, () =>
    runProjectChecks(ctx, ctx.options.signal),
  );
  if (checked.removed.length > 0)
    ctx.bus.emit({
      type: 'log',
      level: 'info',
      message: `removed ${checked.removed.length} file(s) the checks created (not the agent's work): ${checked.removed.slice(0, 5).join(', ')}`,
    });
  if (checks.aborted) return { problem: 'the checks were interrupted', checked: null };
  return { problem: checks.problem, checked: checks.problem === null ? checked : null };
}
