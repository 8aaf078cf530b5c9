import type { WorkflowContext } from './context.js';
import { readTasksFile, TASKS_FILE } from './phase-helpers.js';

/**
 * Where the sandbox lets the `single` engine's dev-agent write (issue 14): the union of the
 * scopes of the tasks it is working on (every task of TASKS.md not completed yet; all of them when
 * the runner sends it back with every task marked completed), and TASKS.md,
 * whose statuses it updates. A task that declares no `Scope` has no narrower fence than the
 * config's `scope.default_allowed_globs`, so it brings those. Read at each run: a task completed
 * meanwhile no longer widens the next one. The judge still holds the whole change to the phase's
 * scope afterwards; the sandbox's folders may be wider than the globs, never wider than the
 * tasks' folders.
 */
export async function singleWritableGlobs(ctx: WorkflowContext): Promise<string[]> {
  const fence = ctx.setup.config.scope.default_allowed_globs;
  const parsed = await readTasksFile(ctx);
  // TASKS.md unreadable: the dev-agent is told so by the runner and may only repair it.
  if (!parsed.ok) return [TASKS_FILE];
  const open = parsed.tasks.filter((task) => task.status !== 'completed');
  // Every task marked completed, yet the agent runs again: the runner sent it back (a check
  // fails), so the work of any task may need fixing.
  const working = open.length > 0 ? open : parsed.tasks;
  const globs = working.flatMap((task) => task.scope ?? fence);
  return [...new Set([...globs, TASKS_FILE])];
}
