import type { TaskPaths } from './task-credit.js';
import { taskGlobs, touchesTask } from './task-credit.js';
import type { TickTarget } from './tick-target.js';

/**
 * The orchestrator's "already done" (a control stop) is a claim; what backs it is the workflow's
 * own commits. A task is already done only when commits on this branch since the workflow's base
 * changed its paths (a resume after a kill between the tick's commit and the task's record, or a
 * task an earlier task's change covered); the caller then runs the project's checks on the tree.
 * A task whose TASKS.md entry names no paths has nothing to show: never already done.
 */
export async function earlierWorkOn(
  target: TickTarget,
  base: string | null,
  paths: TaskPaths | null,
): Promise<string[]> {
  const own = taskGlobs(paths);
  if (base === null || own.length === 0) return [];
  const diff = await target.git().run(['diff', '--name-only', '-z', '--no-renames', base, 'HEAD']);
  if (diff.code !== 0) return [];
  return diff.stdout
    .toString('utf8')
    .split('\0')
    .filter((path) => path !== '' && touchesTask(path, own));
}
