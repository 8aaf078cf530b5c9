import type { WriteFence } from '../agents/claude-code/scope-hook.js';
import { commitJudgedTree } from '../judge/commit.js';
import { keepAside } from '../judge/keep-aside.js';
import { rollback } from '../judge/rollback.js';
import type { EffectiveScope } from '../judge/scope-rules.js';
import { undoBeyondGit } from '../judge/stop-cleanup.js';
import type { JudgeIndex } from '../judge/touched-set.js';
import { TreeChangedError } from '../judge/verified-tree.js';
import type { BlastRadius } from '../protocol/report.js';
import { type BuildGuards, judgeChanges, takeBuildGuards } from '../session/judge-phase.js';
import { agentFile, clearInflight, markInflight, recordCommitInFlight } from '../session/recover.js';
import { newRunId } from '../session/run-id.js';
import { CONFIG_FILE_NAME, type WorkspacePaths } from '../workspace/paths.js';
import type { StepOutcome } from './agent-step.js';
import type { CheckedTree } from './checked-tree.js';
import type { WorkflowContext } from './context.js';

/**
 * A workflow agent (spec, single dev, QA) is judged like a tick's builder: the runner's guards and
 * the crash-recovery record before it runs, the judge from git reality after it, then the judged
 * tree committed, or everything rolled back. "The agent wrote the spec" is only believed once git
 * shows exactly that.
 */

export interface JudgedRun {
  readonly step: StepOutcome;
  /** Set when the step was done but its changes broke the phase's scope (then rolled back). */
  readonly violations: string[];
  readonly commit: string | null;
  readonly touched: string[];
  readonly blast: BlastRadius;
  readonly blastLine: string;
  /** Where the work of a run that was rolled back is kept (see keepAside), or null. */
  readonly kept: string | null;
}

export interface PhaseScope {
  readonly allowed: readonly string[];
  readonly allowNewFiles: boolean;
  readonly allowLockfileChanges: boolean;
  readonly maxFiles: number;
  readonly maxLines: number;
}

export async function judgedAgentRun(
  ctx: WorkflowContext,
  phaseScope: PhaseScope,
  commitMessage: string,
  /** The tree the runner's checks passed on (checked-tree.ts): the commit records that or nothing. */
  verifiedTree: (() => CheckedTree | null) | undefined,
  run: () => Promise<StepOutcome>,
): Promise<JudgedRun> {
  const { setup } = ctx;
  const env = ctx.options.env;
  const runId = newRunId(ctx.now());
  // INFLIGHT.json is the runner's last write before the agent: a crash leaves a recoverable record.
  const guards = await takeBuildGuards(
    setup,
    env,
    (early) =>
      markInflight({
        paths: setup.paths,
        facts: setup.facts,
        runId,
        gitGuard: early.gitGuard,
        side: early.sideBefore,
        ignored: early.ignoredBefore,
        env,
        now: ctx.now(),
      }),
    // Written by the runner (or `ralphy abort`) while the agent runs: not the agent's changes.
    workflowRunnerWrites(setup.paths),
  );
  let step: StepOutcome;
  try {
    step = await run();
  } catch (error) {
    // Whatever failed in the runner, the agent's changes are still judged and set aside.
    step = { kind: 'failed', detail: `runner error: ${(error as Error).message}`, costUsd: 0 };
  }
  const judged = await judgeChanges(setup, guards, scopeOf(ctx, phaseScope), 'execute');
  const touched = judged.touched.files.map((f) => f.path);
  ctx.bus.emit({
    type: 'judge.finished',
    code: judged.verdict.code,
    blast_radius: judged.blast,
    blast_radius_line: judged.blastLine,
    sandbox: setup.sandbox.kind,
    violations: judged.verdict.violations.slice(0, 50),
    touched_paths: touched.slice(0, 200),
  });
  // An abort confirmed while the agent ran or was judged (the `a` key, ralphy abort): whatever it
  // finished is set aside, never committed, and the phase ends aborted. Asked again just before
  // the branch moves (commitVerified), so a `y` confirmed while the commit is being made still wins.
  const abortConfirmed = () => ctx.options.signal.aborted && (ctx.options.abortRequested?.() ?? false);
  if (step.kind === 'done' && abortConfirmed()) step = { kind: 'aborted', costUsd: step.costUsd };
  const setAside = async (violations: string[]): Promise<JudgedRun> => {
    const base = { step, touched, blast: judged.blast, blastLine: judged.blastLine };
    try {
      const kept = await keepAside(setup.git, setup.facts, setup.paths, runId);
      const unclean = await undo(ctx, guards, [`refs/relais/recovered/${runId}`]);
      return { ...base, violations: [...violations, ...unclean], commit: null, kept };
    } catch (error) {
      // Never "rolled back" when it was not (issue 14): the in-flight record stays for the next start.
      const failed = `STOP_ROLLBACK_FAILED: rollback failed: ${(error as Error).message.split('\n')[0]}`;
      return { ...base, violations: [...violations, failed], commit: null, kept: null };
    }
  };
  try {
    if (step.kind !== 'done') return await setAside([]);
    if (judged.verdict.code !== null)
      return await setAside(judged.verdict.violations.map((v) => `${judged.verdict.code}: ${v}`));
    const checked = verifiedTree?.() ?? null;
    if (checked?.changedDuring) return await setAside([`${TREE_CHANGED}: ${checked.changedDuring}`]);
    const committed = await commitVerified(ctx, judged.touched.index, commitMessage, checked, abortConfirmed);
    if (committed.ok === 'aborted') {
      step = { kind: 'aborted', costUsd: step.costUsd };
      return await setAside([]);
    }
    if (!committed.ok) return await setAside([`${TREE_CHANGED}: ${committed.detail}`]);
    await clearInflight(setup.paths);
    await ctx.refreshFacts();
    return {
      step,
      touched,
      blast: judged.blast,
      blastLine: judged.blastLine,
      violations: [],
      commit: committed.commit,
      kept: null,
    };
  } finally {
    await judged.touched.index.dispose();
  }
}

const TREE_CHANGED = 'STOP_TREE_CHANGED_DURING_VERIFY';

/** Thrown between making the commit object and moving the branch to it: the human aborted. */
class AbortedBeforeMove extends Error {}

/**
 * Commits the judged tree, refused (before any commit exists) when it is not the verified one, and
 * never moved onto the branch when the abort was confirmed meanwhile (the commit object made by
 * then is left unreferenced: git's gc drops it).
 */
async function commitVerified(
  ctx: WorkflowContext,
  index: JudgeIndex,
  message: string,
  checked: CheckedTree | null,
  abortConfirmed: () => boolean,
): Promise<{ ok: true; commit: string | null } | { ok: false; detail: string } | { ok: 'aborted' }> {
  const { setup } = ctx;
  try {
    const committed = await commitJudgedTree(
      setup.git,
      setup.facts,
      index,
      message,
      async (commit) => {
        if (abortConfirmed()) throw new AbortedBeforeMove();
        await recordCommitInFlight(setup.paths, commit);
      },
      checked?.tree,
    );
    return { ok: true, commit: committed.commit };
  } catch (error) {
    if (error instanceof AbortedBeforeMove) return { ok: 'aborted' };
    if (!(error instanceof TreeChangedError)) throw error;
    return { ok: false, detail: error.message };
  }
}

/** Runner-owned files written while a workflow's agent runs: its state, the agent record, aborts. */
export function workflowRunnerWrites(paths: WorkspacePaths): string[] {
  return [paths.workflow, paths.abortRequest, agentFile(paths)];
}

/**
 * The phase's scope as Claude Code's PreToolUse hook refuses it before the write (issue 14): the
 * judge's own globs, so the first fence never lets through what the second would stop.
 */
export function phaseWriteFence(ctx: WorkflowContext, phase: PhaseScope): WriteFence {
  const scope = scopeOf(ctx, phase);
  return { allowed: [scope.taskAllowed], forbidden: [...scope.forbidden] };
}

function scopeOf(ctx: WorkflowContext, phase: PhaseScope): EffectiveScope {
  const { config, paths } = ctx.setup;
  return {
    taskAllowed: phase.allowed,
    configAllowed: phase.allowed,
    forbidden: [
      ...new Set([
        ...config.scope.default_forbidden_globs,
        '.git',
        '.git/**',
        paths.relDir,
        `${paths.relDir}/**`,
        CONFIG_FILE_NAME,
      ]),
    ],
    allowNewFiles: phase.allowNewFiles,
    allowLockfileChanges: phase.allowLockfileChanges,
    lockfiles: config.scope.lockfiles,
    limits: { max_files_touched: phase.maxFiles, max_lines_changed: phase.maxLines },
  };
}

/** Rolls the run back; a rollback that could not make the tree clean says so (and keeps the record). */
async function undo(
  ctx: WorkflowContext,
  guards: BuildGuards,
  keepRefs: readonly string[],
): Promise<string[]> {
  const { setup } = ctx;
  // Unsafe files and refs first (issue 14): restored refs let the rollback's git read them.
  await undoBeyondGit(setup.facts, setup.paths, guards, keepRefs);
  const result = await rollback({
    git: setup.git,
    facts: setup.facts,
    paths: setup.paths,
    gitGuard: guards.gitGuard,
    ignoredBefore: guards.ignoredBefore,
    sideBefore: guards.sideBefore,
  });
  // A rollback that could not make the tree clean keeps the record: the next start recovers it.
  if (result.clean) {
    await clearInflight(setup.paths);
    return [];
  }
  return [
    `STOP_ROLLBACK_FAILED: rollback did not leave the tree clean: ${result.notes.slice(0, 3).join('; ')}`,
  ];
}
