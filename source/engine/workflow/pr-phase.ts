import { join } from 'node:path';
import { findRunnerTool } from '../agents/find-executable.js';
import type { CircuitBreaker } from '../supervise/circuit-breaker.js';
import { describeEnd, type ProcessResult, runProcess } from '../supervise/run-process.js';
import { writeFileAtomic } from '../workspace/atomic-write.js';
import { oneLine } from '../workspace/printable.js';
import { runnerToolEnv } from '../workspace/tool-path.js';
import { announceBranchBlast, measureBranchBlast } from './branch-blast.js';
import type { PhaseResult, WorkflowContext } from './context.js';
import { interruptionOf } from './interruption.js';
import { type PhaseSignal, phaseSignal, stopped } from './phase-helpers.js';
import { prdObjective, renderPrBody } from './pr-body.js';
import { describeRuns, runProjectChecks } from './project-checks.js';
import { qaSummary } from './qa-phase.js';

/**
 * PR (seed 002 §3.4), deterministic: no agent decides anything here. The runner checks the final
 * tree once more, measures the blast radius, writes the PR body from evidence, pushes the feature
 * branch to the configured remote and opens the pull request with `gh pr create`. Without a remote
 * or `gh` (or when either refuses), the branch is left ready and the user is told exactly what to
 * run; the workflow is still COMPLETED, since everything it had to produce is committed, but
 * `pr_outcome` records what did not happen, so no panel shows the PR phase as done for a push
 * that never happened.
 */

export interface PrOutcome {
  readonly result: PhaseResult;
  readonly nextSteps: string[];
}

export async function prPhase(ctx: WorkflowContext): Promise<PrOutcome> {
  const breaker = ctx.breakerFor('PR');
  ctx.showBreaker(breaker);
  const phase = phaseSignal(ctx, ctx.setup.config.workflow.timeouts.pr);
  try {
    return await openPullRequest(ctx, breaker, phase);
  } finally {
    phase.dispose();
  }
}

async function openPullRequest(
  ctx: WorkflowContext,
  breaker: CircuitBreaker | null,
  phase: PhaseSignal,
): Promise<PrOutcome> {
  const { workflow } = ctx;
  const end = (result: PhaseResult): PrOutcome => ({ result, nextSteps: [] });
  const branch = workflow.feature_branch;
  if (!branch) return end({ kind: 'fail', reason: 'pr_failed', detail: 'no feature branch was recorded' });
  const checks = await runProjectChecks(ctx, phase.signal);
  if (checks.aborted) return end(interruption(ctx, breaker, phase));
  if (checks.problem)
    return end({
      kind: 'fail',
      reason: 'verification_failed',
      detail: `the final tree fails the project's checks (${describeRuns(checks.runs)}); fix it on ${branch}, commit, and run ralphy start again to resume the PR phase`,
    });
  const measured = await measureBranchBlast(ctx);
  announceBranchBlast(ctx, measured);
  await ctx.update({ blast_radius: measured.blast });
  const bodyPath = join(ctx.setup.paths.dir, 'PR_BODY.md');
  await writeFileAtomic(
    bodyPath,
    renderPrBody({
      workflow: ctx.workflow,
      objective: prdObjective(ctx.prd.text),
      blast: measured.blast,
      files: measured.files,
      qaSummary: await qaSummary(ctx, 30),
    }),
  );
  const bodyRel = `${ctx.setup.paths.relDir}/PR_BODY.md`;
  const { remote, draft } = ctx.setup.config.pr;
  const base = workflow.base_branch ?? 'main';
  const ghArgs = [
    'pr',
    'create',
    '--base',
    base,
    '--head',
    branch,
    '--title',
    workflow.prd_title,
    '--body-file',
    bodyPath,
    ...(draft ? ['--draft'] : []),
  ];
  const ghLine = `gh pr create --base ${quote(base)} --head ${quote(branch)} --title ${quote(workflow.prd_title)} --body-file ${bodyRel}${draft ? ' --draft' : ''}`;
  const remoteUrl = await ctx.setup.git.run(['remote', 'get-url', remote]);
  if (remoteUrl.code !== 0)
    return left(ctx, 'not_pushed', `no git remote "${remote}"`, [
      `git remote add ${remote} <url>`,
      `git push --set-upstream ${remote} ${branch}`,
      ghLine,
    ]);
  const ahead = await baseAheadOfRemote(ctx, remote, base);
  if (ahead) ctx.bus.emit({ type: 'log', level: 'warn', message: ahead });
  const push = await supervised(ctx, breaker, phase, 'git', [
    '-c',
    'core.hooksPath=/dev/null',
    '-c',
    'core.fsmonitor=false',
    'push',
    '--no-verify',
    '--progress',
    '--set-upstream',
    remote,
    `${branch}:${branch}`,
  ]);
  const pushInterrupted = interruptedBy(ctx, breaker, phase, push);
  if (pushInterrupted) return end(pushInterrupted);
  if (push.exitCode !== 0)
    return left(ctx, 'not_pushed', `git push to ${remote} failed: ${tail(push)}`, [
      `git push --set-upstream ${remote} ${branch}`,
      ghLine,
    ]);
  const gh = await findRunnerTool(ctx.setup.config.pr.gh_command, ctx.options.env, ctx.setup.facts.root);
  if (!gh)
    return left(
      ctx,
      'pushed',
      `the GitHub CLI (${ctx.setup.config.pr.gh_command}) is not installed; ${branch} is pushed`,
      ['install gh (https://cli.github.com) and run gh auth login', ghLine],
    );
  // A step that re-runs after its worker died may find the pull request it opened (issue 20:
  // no double PR). The fleet asks gh; a local run has no such hook and always creates.
  const existing = await ctx.options.existingPullRequest?.(gh, branch);
  if (existing) {
    await ctx.update({ pr_url: existing, pr_outcome: { kind: 'opened', detail: existing } });
    ctx.bus.emit({ type: 'log', level: 'info', message: `Pull request (already open): ${existing}` });
    return { result: { kind: 'next', event: 'exit_signal' }, nextSteps: [] };
  }
  const created = await supervised(ctx, breaker, phase, gh, ghArgs);
  const ghInterrupted = interruptedBy(ctx, breaker, phase, created);
  if (ghInterrupted) return end(ghInterrupted);
  const url = /https?:\/\/\S+/.exec(created.stdoutTail)?.[0] ?? null;
  if (created.exitCode !== 0 || !url)
    return left(ctx, 'pushed', `gh pr create failed: ${tail(created)}`, ['gh auth status', ghLine]);
  await ctx.update({ pr_url: url, pr_outcome: { kind: 'opened', detail: url } });
  ctx.bus.emit({ type: 'log', level: 'info', message: `Pull request: ${url}` });
  return { result: { kind: 'next', event: 'exit_signal' }, nextSteps: [] };
}

/**
 * Issue 21 item 5: a local base branch with commits its remote lacks makes the PR carry them too
 * (they are in the head branch's history but not in the remote base). Said before the push.
 */
export async function baseAheadOfRemote(
  ctx: WorkflowContext,
  remote: string,
  base: string,
): Promise<string | null> {
  const git = ctx.setup.git;
  const remoteRef = `refs/remotes/${remote}/${base}`;
  const known = await git.run(['rev-parse', '--verify', '-q', `${remoteRef}^{commit}`]);
  const local = await git.run(['rev-parse', '--verify', '-q', `refs/heads/${base}^{commit}`]);
  if (known.code !== 0 || local.code !== 0) return null;
  const count = await git.run(['rev-list', '--count', `${remoteRef}..refs/heads/${base}`]);
  const n = Number(count.stdout.toString('utf8').trim());
  if (count.code !== 0 || !Number.isFinite(n) || n === 0) return null;
  return `the base branch ${base} is ${n} commit(s) ahead of ${remote}/${base}: the pull request would carry them too. Push ${base} first (git push ${remote} ${base}), or review them in the PR`;
}

/**
 * The branch is ready but the PR could not be opened from here: COMPLETED, with the exact commands,
 * and the record of what did not happen (`pushed`: on the remote without a PR; `not_pushed`: here
 * only).
 */
async function left(
  ctx: WorkflowContext,
  kind: 'pushed' | 'not_pushed',
  why: string,
  steps: string[],
): Promise<PrOutcome> {
  ctx.bus.emit({ type: 'log', level: 'warn', message: `No pull request opened: ${why}` });
  const state = kind === 'pushed' ? 'branch pushed, no pull request' : 'branch ready, not pushed';
  await ctx.update({ pr_outcome: { kind, detail: `${state}: ${why}`.slice(0, 500) } });
  return { result: { kind: 'next', event: 'exit_signal' }, nextSteps: steps };
}

/** git and gh under the PR phase's breaker (120 s of silence is a trigger) and timeout. */
async function supervised(
  ctx: WorkflowContext,
  breaker: CircuitBreaker | null,
  phase: PhaseSignal,
  cmd: string,
  args: string[],
): Promise<ProcessResult> {
  const killed = new AbortController();
  // The runner's own checks before this command are not git's or gh's silence.
  breaker?.startRun();
  const stopTimer = ctx.options.clock.every(1000, () => {
    const event = breaker?.check();
    if (!event || !breaker) return;
    ctx.reportBreaker(breaker, event);
    if (event.kind === 'open') killed.abort();
  });
  try {
    return await runProcess({
      cmd,
      args,
      cwd: ctx.setup.facts.root,
      // git, gh and the git gh starts are never found in a folder of the repository.
      env: {
        ...runnerToolEnv(ctx.options.env, ctx.setup.facts.root),
        GIT_TERMINAL_PROMPT: '0',
        GH_PROMPT_DISABLED: '1',
      },
      signal: AbortSignal.any([phase.signal, killed.signal]),
      onOutput: (_stream, data) => {
        const event = breaker?.onBytes(data.length);
        if (event && breaker) ctx.reportBreaker(breaker, event);
      },
    });
  } finally {
    stopTimer();
  }
}

function interruptedBy(
  ctx: WorkflowContext,
  breaker: CircuitBreaker | null,
  phase: PhaseSignal,
  run: ProcessResult,
): PhaseResult | null {
  return run.aborted ? interruption(ctx, breaker, phase) : null;
}

function interruption(ctx: WorkflowContext, breaker: CircuitBreaker | null, phase: PhaseSignal): PhaseResult {
  return interruptionOf(ctx, breaker, phase) ?? stopped(ctx);
}

function tail(run: ProcessResult): string {
  const said = oneLine(`${run.stderrTail}\n${run.stdoutTail}`.trim().split('\n').slice(-3).join(' '), 300);
  return said || describeEnd(run);
}

/** A value for a command line a human will paste: single-quoted when it needs to be. */
function quote(value: string): string {
  return /^[A-Za-z0-9._/:@-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
