import { join } from 'node:path';
import { oneLine } from '../../workspace/printable.js';
import { readUntrustedFile } from '../../workspace/safe-read.js';
import { agentRequest } from '../agent-call.js';
import type { ActionResult, CycleContext } from '../context.js';
import { commitPaths, dirtyPaths, headOf, stashIfDirty } from '../git-ops.js';
import { implementPrompt } from '../prompts.js';
import type { CycleState } from '../state.js';
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
  const files: Array<{ path: string; content: string }> = [];
  for (const entry of state.task.files_to_load) {
    const content = await readUntrustedFile(join(ctx.root, entry.path), 64 * 1024).then((r) =>
      r.ok ? r.text : null,
    );
    if (content !== null) files.push({ path: entry.path, content });
  }
  const title = /^## TITLE\n(.*)$/m.exec(packet)?.[1] ?? state.task.description ?? taskId;
  const base = await headOf(ctx.git);
  const prompt = implementPrompt({ taskId, title, packet, files, failures: state.task.failure_context });
  const outcome = await ctx.runners.implementer.run(
    agentRequest(ctx, 'implementer', prompt, state.task.retry_count + 1),
    ctx.bus,
  );
  if (ctx.signal.aborted) {
    // An interrupt is not an attempt of the task: nothing is counted, the leftovers are kept aside.
    await stashIfDirty(ctx.git, workspace, `relais: ${taskId} interrupted`);
    return failResult(
      state,
      `interrupted: ${outcome.failure ?? 'the run was stopped'}`,
      'CYCLE_AGENT_FAILED',
    );
  }
  const signal = /^(REPLAN_REQUIRED|REQUEST_SPLIT)=true\b(.*)$/m.exec(outcome.text ?? '');
  if (signal) {
    await stashIfDirty(ctx.git, workspace, `relais: ${taskId} stopped with ${signal[1]}`);
    const code = signal[1] === 'REPLAN_REQUIRED' ? 'CYCLE_REPLAN_REQUIRED' : 'CYCLE_REQUEST_SPLIT';
    return pauseResult(
      ctx,
      state,
      code,
      `the implementer signalled ${signal[1]}:${oneLine(signal[2] ?? '', 300)}`,
    );
  }
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
    const next: CycleState = {
      ...state,
      loop: afterAttempt(
        state,
        base,
        head,
        state.loop.progress_mark?.test_count ?? state.last_cycle.test_count,
      ),
      task: {
        ...state.task,
        retry_count: state.task.retry_count + 1,
        failure_context: [...state.task.failure_context, detail].slice(-10),
      },
    };
    return failResult(next, detail, outcome.failure ? 'CYCLE_AGENT_FAILED' : 'CYCLE_IMPLEMENT_FAILED');
  }
  return okResult(
    { ...state, task: { ...state.task, sub_step: 'verify', base_commit: base } },
    `implemented ${taskId}: ${head.slice(0, 12)} (${oneLine(outcome.text ?? '', 200)})`,
  );
}
