import type { VerificationRun } from '../protocol/report.js';
import { sandboxForTree, verificationSandbox } from '../sandbox/sandbox.js';
import { planVerification } from '../verify/plan.js';
import { refusedWriteHint, runVerifications } from '../verify/run-verifications.js';
import type { WorkflowContext } from './context.js';

/**
 * The runner's own verification of the workflow's work: every verification template of the config
 * that needs no parameter (`test`, `lint`, `typecheck` as `relais init` found them), run as argv,
 * one after another, first failure stops. What a model says about its tests is never the evidence;
 * these runs are, and they are kept in WORKFLOW.json with the commit they ran on.
 */

export interface ChecksOutcome {
  readonly runs: VerificationRun[];
  /** A one-line problem when a check failed or could not run, else null. */
  readonly problem: string | null;
  readonly aborted: boolean;
  /** No parameter-free template is configured: nothing could be checked. */
  readonly none: boolean;
}

export function runProjectChecks(ctx: WorkflowContext, signal: AbortSignal): Promise<ChecksOutcome> {
  return runProjectChecksIn(ctx, ctx.setup.facts.root, ctx.setup.git, signal);
}

/**
 * The same checks in another tree of the repository: a parallel lane's worktree, or a merge
 * queue's rebased branch before it may fast-forward (issue 19).
 */
export async function runProjectChecksIn(
  ctx: WorkflowContext,
  root: string,
  git: Pick<WorkflowContext['setup']['git'], 'run'>,
  signal: AbortSignal,
  /** Where the verify events go: a lane's checks say so (issue 19). */
  bus = ctx.bus,
): Promise<ChecksOutcome> {
  const { config } = ctx.setup;
  const ids = config.verification.templates
    .filter((t) => Object.keys(t.params).length === 0)
    .map((t) => t.id);
  if (ids.length === 0) return { runs: [], problem: null, aborted: false, none: true };
  const plan = await planVerification({ fast: ids, slow: [] }, config.verification, root);
  if (!plan.ok) return { runs: [], problem: plan.problems.join('; '), aborted: false, none: false };
  const outcome = await runVerifications(plan.runs, {
    cwd: root,
    logPath: null,
    maxLogBytes: config.verification.max_log_bytes_per_run,
    bus,
    signal,
    env: ctx.options.env,
    // Fenced in the tree checked (a lane's worktree, or the main tree), not always the main one.
    // They check the whole branch, not one task: writable are the config's allowed globs (the
    // fence of every task), plus `sandbox.verification_writable`.
    sandbox: verificationSandbox(sandboxForTree(ctx.setup.sandbox, root), config.scope.default_allowed_globs),
  });
  const head = (await git.run(['rev-parse', 'HEAD'])).stdout.toString('utf8').trim();
  await ctx.update({ verification: { commit: head, runs: outcome.runs.slice(0, 50) } });
  const failed = outcome.failedPhase ? outcome.runs.at(-1) : undefined;
  const problem = failed
    ? `verification "${failed.template_id}" ${failed.timed_out ? 'timed out' : `exited ${failed.exit_code}`}${refusedWriteHint(outcome.refused)}`
    : null;
  return { runs: outcome.runs, problem, aborted: outcome.aborted, none: false };
}

/** "test ✓ 1.2s, lint ✗ exit 1": one line a human reads in a task record or a PR body. */
export function describeRuns(runs: readonly VerificationRun[]): string {
  if (runs.length === 0) return 'no verification ran';
  return runs
    .map((r) => {
      const ok = r.exit_code === 0 && !r.timed_out;
      const how = ok ? '✓' : r.timed_out ? '✗ timed out' : `✗ exit ${r.exit_code}`;
      return `${r.template_id} ${how} ${(r.duration_ms / 1000).toFixed(1)}s`;
    })
    .join(', ');
}
