import type { AgentOutcome } from '../../agents/agent-run.js';
import type { WriteFence } from '../../agents/claude-code/scope-hook.js';
import { questionOf } from '../../agents/needs-input.js';
import { CONFIG_FILE_NAME } from '../../workspace/paths.js';
import { oneLine } from '../../workspace/printable.js';
import { agentRequest } from '../agent-call.js';
import type { CycleCode } from '../codes.js';
import type { ActionResult, CycleContext } from '../context.js';
import { commitPaths, dirtyPaths, headOf, stashIfDirty } from '../git-ops.js';
import { describeGuarded, type GuardReport, restoreGuarded, takeCycleGuards } from '../guards.js';
import { checkIntegrity, describeUndone, type IntegrityReport, takeIntegrityGuard } from '../integrity.js';
import { implementPrompt } from '../prompts.js';
import type { CycleState } from '../state.js';
import { cycleTaskGlobs } from '../task-scope.js';
import { readRepoFile } from '../track-docs.js';
import { failResult, okResult, pauseResult } from './common.js';
import { afterAttempt } from './progress.js';

/**
 * Seed 003 implement_task. The implementer (Codex by default) works in the tree; results are read
 * from git, never from its words. Codex's workspace-write sandbox keeps .git read-only, so the
 * runner commits what the agent changed (`relais(<task>): <title>`); an agent that commits itself
 * (Claude Code) is fine too. Success needs exit 0 and a new commit; a failed attempt's leftovers
 * are stashed so the next attempt starts clean.
 */
export async function implementTask(ctx: CycleContext, state: CycleState): Promise<ActionResult> {
  const workspace = ctx.config.workspace_dir;
  const dirty = await dirtyPaths(ctx.git, workspace);
  // Not an attempt of the task: a human's uncommitted work must not be swept into its commit.
  if (dirty.length > 0) {
    const reason = `the worktree is dirty before implementation: ${dirty.slice(0, 5).join(', ')}`;
    return pauseResult(ctx, state, 'CYCLE_DIRTY_TREE', reason);
  }
  const taskId = state.task.id as string;
  const packet = state.task.packet_path ? await readRepoFile(ctx.root, state.task.packet_path) : null;
  if (packet === null)
    return failResult(
      { ...state, task: { ...state.task, sub_step: 'generate' } },
      `the task packet ${state.task.packet_path} is missing; it will be generated again`,
      'CYCLE_STATE_INCONSISTENT',
    );
  const files = await filesToLoad(ctx, state);
  const title = /^## TITLE\n(.*)$/m.exec(packet)?.[1] ?? state.task.description ?? taskId;
  const base = await headOf(ctx.git);
  const prompt = implementPrompt({
    taskId,
    title,
    packet,
    files,
    failures: state.task.failure_context,
    answers: state.task.human_answers,
  });
  const guards = await takeCycleGuards(ctx);
  const integrityGuard = await takeIntegrityGuard(ctx, { branchMayMove: true, stamps: false });
  const outcome = await ctx.runners.implementer.run(
    {
      ...agentRequest(ctx, 'implementer', prompt, state.task.retry_count + 1),
      writeFence: implementerFence(ctx, state),
      // The OS sandbox's writable folders: the same scope, so Codex's writes are fenced too.
      writableGlobs: cycleTaskGlobs(ctx.config, state.task.files),
    },
    ctx.bus,
  );
  // Filesystem only, before any git command: planted hooks or config never run.
  const guarded = await restoreGuarded(ctx, guards);
  const integrity = await checkIntegrity(ctx, integrityGuard);
  const damaged = damagedPause(ctx, state, integrity);
  if (damaged) return damaged;
  if (ctx.signal.aborted) {
    // An interrupt is not an attempt of the task: nothing is counted, the leftovers are kept aside.
    await stashIfDirty(ctx.git, workspace, `relais: ${taskId} interrupted`);
    const restored = guarded.changed.length ? `; restored ${describeGuarded(guarded)}` : '';
    return failResult(
      state,
      `interrupted: ${outcome.failure ?? 'the run was stopped'}${restored}`,
      'CYCLE_AGENT_FAILED',
    );
  }
  const harm = harmUndone(guarded, integrity);
  if (harm !== null) return protectedChanged(ctx, state, base, harm);
  const stopped = await stoppedBefore(ctx, state, outcome);
  if (stopped) return stopped;
  if (outcome.failure === null) {
    const changed = await dirtyPaths(ctx.git, workspace);
    await commitPaths(ctx.git, changed, `relais(${taskId}): ${title}`);
  }
  const head = await headOf(ctx.git);
  const problem =
    outcome.failure ?? (head === base ? 'no new commit: the implementer changed nothing' : null);
  if (problem) {
    const stashed = await stashIfDirty(
      ctx.git,
      workspace,
      `relais: failed attempt ${state.task.retry_count + 1} of ${taskId}`,
    );
    const detail = `implementation failed: ${problem}${stashed ? ' (its leftovers are in git stash)' : ''}`;
    const code = outcome.failure ? 'CYCLE_AGENT_FAILED' : 'CYCLE_IMPLEMENT_FAILED';
    return failedAttempt(state, base, head, detail, code);
  }
  return okResult(
    { ...state, task: { ...state.task, sub_step: 'verify', base_commit: base } },
    `implemented ${taskId}: ${head.slice(0, 12)} (${oneLine(outcome.text ?? '', 200)})`,
  );
}

/**
 * Where Claude Code lets the implementer Edit or Write, refused before the write (issue 14): the
 * config's allowed globs plus the files the task plans; never a path stage 1 blocks, a forbidden
 * glob of the config, git internals, the runner's workspace or its config.
 */
export function implementerFence(ctx: CycleContext, state: CycleState): WriteFence {
  const workspace = ctx.config.workspace_dir;
  return {
    allowed: [cycleTaskGlobs(ctx.config, state.task.files)],
    forbidden: [
      ...ctx.config.scope.default_forbidden_globs,
      ...ctx.policy.verify.blocked_globs,
      '.git',
      '.git/**',
      workspace,
      `${workspace}/**`,
      CONFIG_FILE_NAME,
    ],
  };
}

/** Existing objects damaged: nothing of this repository can be judged, a human must look. */
function damagedPause(ctx: CycleContext, state: CycleState, integrity: IntegrityReport): ActionResult | null {
  if (integrity.damaged.length === 0) return null;
  return pauseResult(
    ctx,
    state,
    'CYCLE_GIT_OBJECT_CORRUPTED',
    `the implementer's run damaged existing git objects: ${integrity.damaged.slice(0, 5).join('; ')}`,
  );
}

/** What the run changed that only the runner may (already restored or removed), or null. */
function harmUndone(guarded: GuardReport, integrity: IntegrityReport): string | null {
  const what = [guarded.changed.length > 0 ? describeGuarded(guarded) : null, describeUndone(integrity)];
  const found = what.filter((w): w is string => w !== null);
  return found.length > 0 ? found.join('; ') : null;
}

/**
 * An answer that is not an attempt to judge: a REPLAN_REQUIRED or REQUEST_SPLIT signal (a pause),
 * or a question for the human. Null when the implementer simply worked.
 */
async function stoppedBefore(
  ctx: CycleContext,
  state: CycleState,
  outcome: AgentOutcome,
): Promise<ActionResult | null> {
  const taskId = state.task.id as string;
  const signal = /^(REPLAN_REQUIRED|REQUEST_SPLIT)=true\b(.*)$/m.exec(outcome.text ?? '');
  if (signal) {
    await stashIfDirty(ctx.git, ctx.config.workspace_dir, `relais: ${taskId} stopped with ${signal[1]}`);
    const code = signal[1] === 'REPLAN_REQUIRED' ? 'CYCLE_REPLAN_REQUIRED' : 'CYCLE_REQUEST_SPLIT';
    return pauseResult(
      ctx,
      state,
      code,
      `the implementer signalled ${signal[1]}:${oneLine(signal[2] ?? '', 300)}`,
    );
  }
  const question = outcome.failure === null ? questionOf(outcome.text ?? '') : null;
  return question ? askedInstead(ctx, state, question) : null;
}

/**
 * Issue 15: the implementer asked the human instead of implementing. That is no failed attempt
 * and nothing is committed: its leftovers go to git stash, and the question goes to the human
 * (the app or terminal of `relais cycle` or `ralphy start`). Answered, the same task runs again
 * with the answer; unanswered, the cycle pauses (CYCLE_NEEDS_INPUT) until `--resume --answer`.
 */
async function askedInstead(ctx: CycleContext, state: CycleState, question: string): Promise<ActionResult> {
  const taskId = state.task.id as string;
  const stashed = await stashIfDirty(ctx.git, ctx.config.workspace_dir, `relais: ${taskId} asked a question`);
  const kept = stashed ? ' (its leftovers are in git stash)' : '';
  const reply = await ctx.gates.ask(
    { gate: 'input', title: `The implementer asks about ${taskId}`, lines: [question], answer: 'text' },
    ctx.signal,
  );
  if (reply.decision === 'answer' && reply.text?.trim()) {
    const answered = `You asked: ${question}\nThe human answered: ${reply.text.trim()}`.slice(0, 4000);
    return okResult(
      {
        ...state,
        task: { ...state.task, human_answers: [...state.task.human_answers, answered].slice(-10) },
      },
      `the implementer asked a question and the human answered; ${taskId} runs again with the answer${kept}`,
    );
  }
  return pauseResult(
    ctx,
    state,
    'CYCLE_NEEDS_INPUT',
    `the implementer asked: ${oneLine(question, 1500)}${kept}`,
  );
}

/**
 * The implementer changed what only the runner may (already restored): the attempt fails and
 * counts, its work is kept in git stash, and commits it made itself are taken back off the branch
 * (still in the reflog), so nothing it did reaches verification.
 */
async function protectedChanged(
  ctx: CycleContext,
  state: CycleState,
  base: string,
  what: string,
): Promise<ActionResult> {
  const taskId = state.task.id as string;
  const stashed = await stashIfDirty(
    ctx.git,
    ctx.config.workspace_dir,
    `relais: attempt ${state.task.retry_count + 1} of ${taskId} changed protected files`,
  );
  const head = await headOf(ctx.git);
  if (head !== base) await ctx.git.ok(['reset', '--hard', '-q', base]);
  const kept = [
    ...(stashed ? ['its changes are in git stash'] : []),
    ...(head !== base
      ? [`its commits up to ${head.slice(0, 12)} were taken off the branch (git reflog)`]
      : []),
  ];
  const detail = `the implementer changed runner-owned or git control files, refs, or left files git cannot judge (undone): ${what}${kept.length ? `; ${kept.join('; ')}` : ''}`;
  return failedAttempt(state, base, base, detail, 'CYCLE_PROTECTED_CHANGED');
}

/** A failed attempt counts (retry_count), feeds the next prompt, and the no-progress rule. */
function failedAttempt(
  state: CycleState,
  base: string,
  head: string,
  detail: string,
  code: CycleCode,
): ActionResult {
  const testCount = state.loop.progress_mark?.test_count ?? state.last_cycle.test_count;
  return failResult(
    {
      ...state,
      loop: afterAttempt(state, base, head, testCount),
      task: {
        ...state.task,
        retry_count: state.task.retry_count + 1,
        failure_context: [...state.task.failure_context, detail].slice(-10),
      },
    },
    detail,
    code,
  );
}

/** task.files_to_load, read as untrusted files of the repository (a link or a FIFO is skipped). */
async function filesToLoad(
  ctx: CycleContext,
  state: CycleState,
): Promise<Array<{ path: string; content: string }>> {
  const files: Array<{ path: string; content: string }> = [];
  for (const entry of state.task.files_to_load) {
    const content = await readRepoFile(ctx.root, entry.path, 64 * 1024);
    if (content !== null) files.push({ path: entry.path, content });
  }
  return files;
}
