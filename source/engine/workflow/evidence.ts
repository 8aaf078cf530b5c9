import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CircuitBreaker } from '../supervise/circuit-breaker.js';
import { descendantsOf } from '../supervise/process-tree.js';
import type { WorkflowContext } from './context.js';
import { TASKS_FILE } from './phase-helpers.js';
import { countCompleted, type PlanTask, parseTasks } from './tasks-file.js';

/**
 * Progress judged from evidence (issue 4), never from "is the tree dirty": snapshots of HEAD, the
 * worktree's changes, the task statuses and the CPU time of the agent's tool processes are
 * compared with the previous one. A change is progress, so an agent that commits on its own or
 * works quietly inside a long tool call is not stuck, and a tree that was dirty before the phase
 * and stays the same is no progress. A task newly `completed` in TASKS.md feeds stagnation.
 */

interface Snapshot {
  readonly fingerprint: string;
  readonly completed: number;
  readonly toolCpuTicks: number;
}

export function evidenceWatcher(
  ctx: WorkflowContext,
  breaker: CircuitBreaker | null,
  onTasks?: (tasks: PlanTask[]) => Promise<void>,
): (pgid: number | null) => Promise<void> {
  let last: Snapshot | null = null;
  return async (pgid) => {
    const { snapshot, tasks } = await takeSnapshot(ctx, pgid);
    if (last !== null) {
      if (snapshot.fingerprint !== last.fingerprint || snapshot.toolCpuTicks > last.toolCpuTicks)
        breaker?.onProgress();
      if (snapshot.completed > last.completed) breaker?.onTaskCompleted();
      if (tasks && snapshot.completed !== last.completed) await onTasks?.(tasks);
    }
    last = snapshot;
  };
}

async function takeSnapshot(
  ctx: WorkflowContext,
  pgid: number | null,
): Promise<{ snapshot: Snapshot; tasks: PlanTask[] | null }> {
  const git = ctx.setup.git;
  const [head, status, text] = await Promise.all([
    git.run(['rev-parse', 'HEAD']),
    git.run(['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignore-submodules=dirty']),
    readFile(join(ctx.setup.facts.root, TASKS_FILE), 'utf8').catch(() => ''),
  ]);
  const parsed = parseTasks(text);
  const tasks = parsed.ok ? parsed.tasks : null;
  return {
    snapshot: {
      fingerprint: createHash('sha1').update(head.stdout).update(status.stdout).update(text).digest('hex'),
      completed: tasks ? countCompleted(tasks) : 0,
      toolCpuTicks: pgid === null ? 0 : toolCpuTicks(pgid),
    },
    tasks,
  };
}

/** CPU time (clock ticks) of the agent's child processes: its tools at work, on Linux. */
export function toolCpuTicks(pgid: number): number {
  let total = 0;
  for (const pid of descendantsOf(pgid)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime and stime are fields 14 and 15 of /proc/<pid>/stat (11 and 12 after the name).
      total += Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
    } catch {
      // gone meanwhile
    }
  }
  return total;
}
