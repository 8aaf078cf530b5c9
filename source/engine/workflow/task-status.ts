import { join } from 'node:path';
import { identityEnv } from '../judge/commit.js';
import { writeFileAtomic } from '../workspace/atomic-write.js';
import { readRepoFile } from '../workspace/safe-read.js';
import type { WorkflowContext } from './context.js';
import { TASKS_FILE } from './phase-helpers.js';
import { parseTasks, type TaskStatus, withStatus } from './tasks-file.js';

/**
 * In the `ticks` engine the runner, not an agent, updates TASKS.md: once a task's tick is judged,
 * verified and committed, its status line is rewritten (nothing else in the file changes) and
 * committed on its own, so the next tick starts from a clean tree again.
 */
export async function commitTaskStatus(
  ctx: WorkflowContext,
  number: number,
  status: TaskStatus,
): Promise<string | null> {
  const path = join(ctx.setup.facts.root, TASKS_FILE);
  const read = await readRepoFile(ctx.setup.facts.root, TASKS_FILE, 16 * 1024 * 1024);
  if (!read.ok) return null;
  const text = read.text;
  const parsed = parseTasks(text);
  const task = parsed.ok ? parsed.tasks.find((t) => t.number === number) : undefined;
  if (!task || task.status === status) return null;
  const updated = withStatus(text, task, status);
  // Nothing to commit when the line could not change (it already says so in some other spelling).
  if (updated === text) return null;
  await writeFileAtomic(path, updated);
  const git = ctx.setup.git;
  const env = await identityEnv(git);
  await git.ok(['add', '--', TASKS_FILE]);
  await git.ok(['commit', '-q', '--no-verify', '-m', `ralphy: task ${number} ${status}`, '--', TASKS_FILE], {
    env,
  });
  await ctx.refreshFacts();
  return ctx.setup.facts.head;
}
