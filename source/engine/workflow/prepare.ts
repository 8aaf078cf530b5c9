import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, realpath, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { identityEnv } from '../judge/commit.js';
import { Git } from '../judge/git.js';
import { readRepoFacts, worktreeStatus } from '../judge/repo.js';
import { isSafeBranchName, type WorkflowFile, type WorkflowStateName } from '../protocol/workflow.js';
import { warnIfSandboxOff } from '../sandbox/off-warning.js';
import { SANDBOX_FIX } from '../sandbox/sandbox.js';
import {
  acquireLock,
  type HeldLock,
  loadSetup,
  recoverInterruptedRun,
  roleRoutedRunner,
  sandboxRefusal,
  type TickSetup,
} from '../session/index.js';
import { branchSlug, type Prd, readPrd } from '../session/prd.js';
import { writeFileAtomic } from '../workspace/atomic-write.js';
import type { DoctorCheck } from '../workspace/doctor-checks.js';
import { initWorkspace } from '../workspace/init-workspace.js';
import { CONFIG_FILE_NAME } from '../workspace/paths.js';
import { clearAbortRequest } from './abort-request.js';
import { WorkflowContext, type WorkflowOptions } from './context.js';
import { lastRejection } from './gate-feedback.js';
import { issuePrd } from './issue-prd.js';
import { lanesRefusal } from './lanes-options.js';
import { askGate } from './phase-helpers.js';
import { workflowPrerequisites } from './prerequisites.js';
import { freshWorkflow, readWorkflow, resumePhase, writeWorkflow } from './workflow-store.js';

/**
 * Everything before the first phase of `ralphy start`: the project and PRD.md, `relais init` when
 * the project has none, the prerequisites of seed 002 §11, the workspace lock (held for the whole
 * workflow), recovery of an agent run a crash interrupted, the resume question, and the feature
 * branch every commit of the workflow goes to. A project without a workspace is initialised first
 * (nothing else is changed before the checks pass).
 */

export type Prepared =
  | { ok: true; ctx: WorkflowContext; lock: HeldLock; resumedFrom: WorkflowStateName | null }
  | { ok: false; detail: string; fix: string; checks: DoctorCheck[] };

export async function prepareWorkflow(
  options: WorkflowOptions,
  /** Called as soon as the workspace lock is held (from then on `ralphy abort` can reach this run). */
  onLocked: (paths: TickSetup['paths']) => Promise<void> = async () => undefined,
): Promise<Prepared> {
  const now = options.now?.() ?? new Date();
  const root = await realpath(options.root).catch(() => null);
  if (!root) return refuse(`${options.root} does not exist`, 'Give the path of your project folder.');
  const git = new Git(root, options.env);
  const repo = await readRepoFacts(git, root);
  if (!repo.ok) return refuse(repo.detail, repositoryFix(repo.detail));
  if (!repo.facts.branchRef)
    return refuse('HEAD is detached', 'Check out the branch the work should start from (git switch main).');
  // `--issue`: the PRD is the issue's planned thread, read once the workspace is known (below).
  const prdFile = options.issue === undefined ? await readPrd(join(root, 'PRD.md')) : null;
  if (prdFile && !prdFile.ok)
    return refuse(
      prdFile.problem,
      'Write PRD.md at the project root: a "# Title" line and an "## Objective" section.',
    );
  const configWasMissing = !existsSync(join(root, CONFIG_FILE_NAME));
  let loaded = await loadSetup(root, options.env);
  if (!loaded.ok && options.issue !== undefined)
    return refuse(
      `issue #${options.issue} has not been planned in this project (${loaded.block.detail})`,
      `Run relais plan --issue ${options.issue} until it says "ready for the spec", then ralphy start --issue ${options.issue}.`,
    );
  if (!loaded.ok) {
    // No config or no workspace yet, so no run can hold the lock: `relais init` (idempotent) first.
    const init = await initProblem(root, options.env, now);
    if (init) return refuse(init, 'Fix it, then run ralphy start again.');
    if (configWasMissing)
      options.bus.emit({
        type: 'log',
        level: 'info',
        message: `Initialised relais in ${root} (relais.config.json, relais/)`,
      });
    loaded = await loadSetup(root, options.env);
  }
  if (!loaded.ok)
    return refuse(
      loaded.block.detail,
      'Fix relais.config.json (the detail names the field), then try again.',
    );
  const setup = loaded.setup;
  const noSandbox = sandboxRefusal(setup.sandbox);
  if (noSandbox) return refuse(`${noSandbox.code}: ${noSandbox.detail}`, SANDBOX_FIX);
  warnIfSandboxOff(setup.sandbox, options.bus);
  const prd = prdFile?.ok ? prdFile : await issueAsPrd(options, setup, root);
  if (!prd.ok) return refuse(prd.detail, prd.fix);
  const missing = await missingPrerequisites(options, setup, root);
  if (missing) return missing;
  const lock = await acquireLock(setup.paths.lock, 'ralphy start');
  if (!lock.ok)
    return refuse(
      `another relais or ralphy run holds the workspace lock: ${lock.detail}`,
      'Wait for it to finish (ralphy status), or stop it (ralphy abort).',
    );
  await clearAbortRequest(setup.paths);
  await onLocked(setup.paths);
  // Under the lock, where no other run's judge is watching the workspace: add what an older
  // workspace lacks (a new prompt file, current schemas).
  const upgrade = await initProblem(root, options.env, now);
  if (upgrade) {
    await lock.lock.release();
    return refuse(upgrade, 'Fix it, then run ralphy start again.');
  }
  try {
    // An untracked config is relais init's (now or in an earlier start that stopped early): the
    // workflow's first commit, on its branch; it does not make the tree dirty.
    const configUntracked =
      (await setup.git.run(['ls-files', '--error-unmatch', '--', CONFIG_FILE_NAME])).code !== 0;
    const ready = await underLock(options, setup, prd.prd, configUntracked, now);
    if (!ready.ok) await lock.lock.release();
    return ready.ok ? { ...ready, lock: lock.lock } : ready;
  } catch (error) {
    await lock.lock.release();
    throw error;
  }
}

/** The fix for a folder that is not a repository's root: "git init" only where there is none. */
function repositoryFix(detail: string): string {
  if (detail.startsWith('not a git repository'))
    return 'Run ralphy start at the root of a git repository with at least one commit (git init, git commit).';
  if (detail.startsWith('HEAD')) return 'Make a first commit (git add -A && git commit -m "Initial commit").';
  return 'Run ralphy start at the root of the repository.';
}

async function underLock(
  options: WorkflowOptions,
  found: TickSetup,
  prd: Prd,
  configUntracked: boolean,
  now: Date,
): Promise<
  { ok: true; ctx: WorkflowContext; resumedFrom: WorkflowStateName | null } | Extract<Prepared, { ok: false }>
> {
  let setup = found;
  const recovery = await recoverInterruptedRun(setup.git, setup.facts, setup.paths);
  if (recovery.kind !== 'none')
    for (const note of recovery.notes) options.bus.emit({ type: 'log', level: 'warn', message: note });
  if (recovery.kind === 'failed')
    return refuse(recovery.detail, 'Do what the detail says (it names the exact command), then run again.');
  if (recovery.kind === 'recovered') setup = await withFreshFacts(setup);
  const existing = await readWorkflow(setup.paths);
  if (existing.kind === 'invalid')
    return refuse(
      `${setup.paths.relDir}/WORKFLOW.json is unreadable (${existing.reason}); it is kept as it is`,
      `Move it aside to start a new workflow: mv ${setup.paths.relDir}/WORKFLOW.json ${setup.paths.relDir}/WORKFLOW.json.bak`,
    );
  const dirty = (await worktreeStatus(setup.git)).filter(
    (e) => !(configUntracked && e.slice(3) === CONFIG_FILE_NAME),
  );
  if (dirty.length > 0)
    return refuse(
      `the working tree has ${dirty.length} uncommitted or untracked path(s): ${dirty.slice(0, 5).join(', ')}`,
      'Commit, stash or remove them: the workflow judges every change against a clean tree.',
    );
  const runner =
    options.agentRunner?.(setup) ??
    roleRoutedRunner(setup.config, { env: options.env, root: setup.facts.root, sandbox: setup.sandbox });
  const previous = existing.kind === 'ok' ? existing.value : null;
  const resumable =
    previous !== null && !['COMPLETED', 'REJECTED'].includes(previous.state) && previous.state !== 'IDLE';
  // Asked before the resume question, which would record an answer for a run that cannot be.
  const problem = startProblem(options, setup, resumable ? previous : null);
  if (problem) return problem;
  if (resumable) {
    const probe = new WorkflowContext(setup, options, previous, prd, runner);
    const from = resumePhase(previous);
    const reply = await askResume(probe, previous, from);
    if (options.signal.aborted) {
      // `ralphy abort` while the question waited: the stopped workflow is what the human aborts.
      if (options.abortRequested?.())
        await probe.enter('FAILED', 'failed', {
          failure_reason: 'aborted',
          failure_detail: `aborted by ${options.abortedBy?.() ?? 'an abort request'} while it waited to be resumed (it had stopped in ${previous.state})`,
        });
      return refuse('interrupted while asking whether to resume', 'Run ralphy start again.');
    }
    if (reply.decision === 'approve') return resume(probe, previous, from);
    if (reply.by === 'nobody')
      return refuse(
        `a workflow for "${previous.prd_title}" stopped in ${previous.state} and nobody can answer whether to resume it`,
        `Run ralphy start --yes to resume it at ${from}, or move ${setup.paths.relDir}/WORKFLOW.json aside to start over.`,
      );
  }
  if (previous) await archive(setup, previous);
  return startFresh(options, setup, prd, runner, configUntracked, now, previous);
}

/**
 * The resume question, with the task list in view (issue 16 item 6): as the runner left each task,
 * and the spend it recorded per phase.
 */
async function askResume(probe: WorkflowContext, previous: WorkflowFile, from: WorkflowStateName) {
  probe.bus.emit({
    type: 'workflow.resumable',
    state: previous.state,
    completed_phases: [...previous.completed_phases],
  });
  for (const t of previous.tasks)
    probe.bus.emit({
      type: 'task.updated',
      number: t.number,
      title: t.title,
      status: t.status,
      claimed: t.claimed,
      verified: t.verified,
      verdict: t.verdict,
    });
  // And what it spent so far, as recorded: the question's header must not say $0 (issue 16 item 6).
  for (const [phase, spend] of Object.entries(previous.phases))
    if (spend)
      probe.bus.emit({
        type: 'workflow.spend',
        phase: phase as keyof typeof previous.phases,
        ...spend,
        total_cost_usd: previous.cost_usd,
        total_unreported_usd: previous.unreported_usd,
        total_unreported_calls: previous.unreported_calls,
      });
  const verified = previous.tasks.filter((t) => t.verdict === 'verified').length;
  const failed = previous.status === 'failed' || previous.status === 'rejected';
  return askGate(
    probe,
    'resume',
    failed ? 'Resume the failed workflow?' : 'Resume the interrupted workflow?',
    [
      howItStopped(previous),
      ...(previous.tasks.length > 0
        ? [`${verified}/${previous.tasks.length} task(s) verified by the runner so far.`]
        : []),
      `y: resume at ${from}, on branch ${previous.feature_branch ?? '(none)'}`,
      'n: start a new workflow (the old state is kept in relais/history/workflows/)',
    ],
    'yes_no',
  );
}

/**
 * How the previous workflow ended, in the word `ralphy status` uses (the newcomer's pass, defect
 * 12: after a kill -9 the question said "(running)" and status "(interrupted)"). Whoever asks holds
 * the lock, so a workflow still marked running or waiting lost its process: it was interrupted.
 */
function howItStopped(previous: WorkflowFile): string {
  const title = `"${previous.prd_title}"`;
  if (previous.status === 'failed' || previous.status === 'rejected')
    return `${title} ${previous.status === 'failed' ? 'failed' : 'was rejected'}${previous.failure_reason ? ` (${previous.failure_reason})` : ''}.`;
  return `${title} was interrupted in ${previous.state}.`;
}

async function resume(
  ctx: WorkflowContext,
  previous: WorkflowFile,
  from: WorkflowStateName,
): Promise<
  { ok: true; ctx: WorkflowContext; resumedFrom: WorkflowStateName } | Extract<Prepared, { ok: false }>
> {
  const branch = previous.feature_branch;
  if (branch && ctx.setup.facts.branchRef !== `refs/heads/${branch}`) {
    const switched = await ctx.setup.git.run(['checkout', '-q', branch]);
    if (switched.code !== 0)
      return refuse(
        `cannot switch to the workflow's branch ${branch}: ${switched.stderr.trim()}`,
        `git switch ${branch}, then ralphy start again.`,
      );
    await ctx.refreshFacts();
  }
  // The config may have changed meanwhile (a raised spend cap, say): what it says now holds.
  ctx.workflow = {
    ...ctx.workflow,
    pid: process.pid,
    waiting_until: null,
    next_steps: [],
    max_cost_usd: ctx.setup.config.workflow.max_cost_usd,
  };
  ctx.workflow = { ...ctx.workflow, phases: ctx.withPhaseCaps() };
  await ctx.enter(from, 'running', { failure_reason: null, failure_detail: null, current_task: null });
  return { ok: true, ctx, resumedFrom: from };
}

async function startFresh(
  options: WorkflowOptions,
  found: TickSetup,
  prd: Prd,
  runner: WorkflowContext['runner'],
  configUntracked: boolean,
  now: Date,
  previous: WorkflowFile | null,
): Promise<{ ok: true; ctx: WorkflowContext; resumedFrom: null } | Extract<Prepared, { ok: false }>> {
  const { config } = found;
  const current = (found.facts.branchRef ?? '').replace(/^refs\/heads\//, '');
  // Still on the previous workflow's branch: the new one starts where that one started, not on
  // top of its commits.
  const baseBranch =
    previous?.feature_branch === current && previous.base_branch ? previous.base_branch : current;
  if (!isSafeBranchName(baseBranch))
    return refuse(
      `the branch "${baseBranch}" has a name the runner will not pass to git (a leading "-", "..", control characters)`,
      'Start from a branch with a plain name (git switch -c work).',
    );
  const baseCommit = (
    await found.git.run(['rev-parse', '--verify', '-q', `refs/heads/${baseBranch}^{commit}`])
  ).stdout
    .toString('utf8')
    .trim();
  if (!baseCommit)
    return refuse(
      `the branch ${baseBranch} does not exist any more`,
      'git switch to the branch the work should start from.',
    );
  const feature = await freeBranchName(found.git, `${config.workflow.branch_prefix}${branchSlug(prd.title)}`);
  // The config this start loaded, as it is now: the base may not have it (see below).
  const configPath = join(found.facts.root, CONFIG_FILE_NAME);
  const configText = await readFile(configPath, 'utf8').catch(() => null);
  const created = await found.git.run(['checkout', '-q', '-b', feature, baseCommit]);
  if (created.code !== 0)
    return refuse(
      `cannot create the branch ${feature}: ${created.stderr.trim()}`,
      'Check the repository, then run ralphy start again.',
    );
  // Issue 16 item 12: an earlier start committed relais init's config on its own branch, which was
  // then rejected; starting over from the base loses it, and every tick would be
  // BLOCKED_MISSING_CONFIG. What `ralphy start` set up for the user survives: the config it ran
  // with is carried onto the new branch (a base with its own config keeps that one).
  const carried = configText !== null && !existsSync(configPath);
  if (carried) await writeFileAtomic(configPath, configText);
  if (configUntracked || carried) {
    // `relais init` wrote the config: it is the workflow's first commit, on its own branch.
    await found.git.ok(['add', '--', CONFIG_FILE_NAME]);
    await found.git.ok(
      ['commit', '-q', '--no-verify', '-m', 'ralphy: add relais config', '--', CONFIG_FILE_NAME],
      {
        env: await identityEnv(found.git),
      },
    );
  }
  const setup = await withFreshFacts(found);
  const workflow: WorkflowFile = {
    ...freshWorkflow({
      prdTitle: prd.title,
      now,
      maxAttempts: config.circuit_breaker.max_attempts,
      engine: options.engine ?? config.workflow.implementation_engine,
      maxCostUsd: config.workflow.max_cost_usd,
      issue: prd.issue ?? null,
    }),
    base_branch: baseBranch,
    feature_branch: feature,
    base_commit: baseCommit,
    // A specification rejected with a reason: the new workflow's spec agent reads why (issue 16 item 5).
    gate_decisions: carriedRejection(previous),
  };
  const ctx = new WorkflowContext(setup, options, workflow, prd, runner);
  ctx.workflow = { ...workflow, phases: ctx.withPhaseCaps() };
  // IDLE until the run announces itself; then seed 002 §8's `start` moves it to SPECIFICATION.
  await writeWorkflow(setup.paths, ctx.workflow);
  return { ok: true, ctx, resumedFrom: null };
}

/**
 * What makes this start impossible before anything is asked: a resume with another engine or
 * PRD, or lanes (issue 19) under an engine that has none.
 */
function startProblem(
  options: WorkflowOptions,
  setup: TickSetup,
  resumed: WorkflowFile | null,
): Extract<Prepared, { ok: false }> | null {
  const relDir = setup.paths.relDir;
  const mismatch = resumed
    ? (engineMismatch(options, resumed, relDir) ?? issueMismatch(options, resumed, relDir))
    : null;
  if (mismatch) return mismatch;
  // Lanes are the ticks engine's; another engine would run one task at a time unasked.
  const engine = resumed?.engine ?? options.engine ?? setup.config.workflow.implementation_engine;
  const noLanes = lanesRefusal(options, setup.config, engine);
  return noLanes ? refuse(noLanes.detail, noLanes.fix) : null;
}

/**
 * A resume runs the engine the workflow started with (its tasks, ticks and commits are that
 * engine's): `--engine` naming another one is refused rather than silently ignored.
 */
function engineMismatch(
  options: WorkflowOptions,
  previous: WorkflowFile,
  relDir: string,
): Extract<Prepared, { ok: false }> | null {
  if (options.engine === undefined || options.engine === previous.engine) return null;
  return refuse(
    `--engine ${options.engine} cannot resume this workflow: "${previous.prd_title}" started with the ${previous.engine} engine (recorded in ${relDir}/WORKFLOW.json)`,
    `Resume it with ralphy start --engine ${previous.engine} (or without --engine), or move ${relDir}/WORKFLOW.json aside to start a new workflow with ${options.engine}.`,
  );
}

function issueAsPrd(options: WorkflowOptions, setup: TickSetup, root: string) {
  return issuePrd({
    issue: options.issue ?? 0,
    paths: setup.paths,
    config: setup.config,
    root,
    env: options.env,
    signal: options.signal,
  });
}

/** A workflow started from an issue resumes from that issue (its PRD is the issue), and only from it. */
function issueMismatch(
  options: WorkflowOptions,
  previous: WorkflowFile,
  relDir: string,
): Extract<Prepared, { ok: false }> | null {
  const asked = options.issue ?? null;
  if (asked === previous.issue) return null;
  const from = (n: number | null) => (n === null ? 'PRD.md' : `issue #${n}`);
  return refuse(
    `"${previous.prd_title}" started from ${from(previous.issue)}, so it cannot be resumed from ${from(asked)}`,
    `Resume it with ralphy start${previous.issue === null ? ' (without --issue)' : ` --issue ${previous.issue}`}, or move ${relDir}/WORKFLOW.json aside to start a new workflow from ${from(asked)}.`,
  );
}

/** The programs and checks a workflow needs (claude, gh, the project's checks): warnings logged, failures returned. */
async function missingPrerequisites(
  options: WorkflowOptions,
  setup: TickSetup,
  root: string,
): Promise<Extract<Prepared, { ok: false }> | null> {
  const prerequisites = await workflowPrerequisites({
    config: setup.config,
    git: setup.git,
    root,
    env: options.env,
  });
  for (const check of prerequisites.checks.filter((c) => c.status === 'warn'))
    options.bus.emit({
      type: 'log',
      level: 'warn',
      message: `${check.name}: ${check.detail}. Fix: ${check.fix}`,
    });
  const failed = prerequisites.checks.filter((c) => c.status === 'fail');
  if (failed.length > 0 || !prerequisites.claude)
    return {
      ok: false,
      detail: failed.map((c) => `${c.name}: ${c.detail}`).join('; '),
      fix: failed.map((c) => c.fix).join('; '),
      checks: prerequisites.checks,
    };
  return null;
}

function carriedRejection(previous: WorkflowFile | null): WorkflowFile['gate_decisions'] {
  const rejected = previous?.state === 'REJECTED' ? lastRejection(previous, 'spec') : null;
  // Labelled with its workflow's branch: the PR body must not show it as this workflow's gate.
  const earlier = rejected?.earlier_branch ?? previous?.feature_branch ?? undefined;
  return rejected ? [{ ...rejected, ...(earlier ? { earlier_branch: earlier } : {}) }] : [];
}

/** `relais init` without force: what it could not do, or null. */
async function initProblem(root: string, env: NodeJS.ProcessEnv, now: Date): Promise<string | null> {
  const init = await initWorkspace(root, { force: false, env, now });
  const problem = init.steps.find((s) => s.action === 'problem');
  return problem ? `${problem.path}: ${problem.note ?? 'problem'}` : null;
}

/** `ralphy/add-slugify`, or `ralphy/add-slugify-2` when that branch exists already. */
async function freeBranchName(git: Git, wanted: string): Promise<string> {
  for (let n = 1; n < 100; n++) {
    const name = n === 1 ? wanted : `${wanted}-${n}`;
    const exists = await git.run(['rev-parse', '--verify', '-q', `refs/heads/${name}`]);
    if (exists.code !== 0) return name;
  }
  return `${wanted}-${Date.now()}`;
}

async function archive(setup: TickSetup, previous: WorkflowFile): Promise<void> {
  const dir = join(setup.paths.historyDir, 'workflows');
  await mkdir(dir, { recursive: true });
  const stamp = previous.started_at.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  // Two workflows started in the same second must not overwrite each other's record.
  const suffix = randomBytes(3).toString('hex');
  await rename(setup.paths.workflow, join(dir, `${stamp}-${previous.state.toLowerCase()}-${suffix}.json`));
}

async function withFreshFacts(setup: TickSetup): Promise<TickSetup> {
  const read = await readRepoFacts(setup.git, setup.facts.root);
  return read.ok ? { ...setup, facts: read.facts } : setup;
}

function refuse(detail: string, fix: string): Extract<Prepared, { ok: false }> {
  return { ok: false, detail, fix, checks: [] };
}
