import type { TaskPaths } from './task-credit.js';
import { taskGlobs, touchesTask } from './task-credit.js';
import type { TickTarget } from './tick-target.js';

/**
 * The orchestrator's "already done" (a control stop) is a claim; what can back it is a change on
 * this branch that no task was credited with: a tick's commit made just before a kill (the task
 * never recorded), or a step for another task that did this one's work ("did other work", its
 * commit kept, credited to nobody). A commit already credited to a task proves nothing about
 * another task that shares its files. The caller then runs the project's checks on the tree.
 * A task whose TASKS.md entry names no paths has nothing to show: never already done.
 */
export async function earlierWorkOn(
  target: TickTarget,
  base: string | null,
  paths: TaskPaths | null,
  credited: ReadonlySet<string>,
): Promise<string[]> {
  const own = taskGlobs(paths);
  if (base === null || own.length === 0) return [];
  const git = target.git();
  const listed = await git.run(['rev-list', `${base}..HEAD`]);
  if (listed.code !== 0) return [];
  const uncredited = listed.stdout
    .toString('utf8')
    .split('\n')
    .filter((commit) => commit !== '' && !credited.has(commit));
  const found = new Set<string>();
  for (const commit of uncredited.slice(0, 200)) {
    const changed = await git.run([
      'diff-tree',
      '--no-commit-id',
      '--name-only',
      '-r',
      '-z',
      '--no-renames',
      commit,
    ]);
    if (changed.code !== 0) continue;
    for (const path of changed.stdout.toString('utf8').split('\0'))
      if (path !== '' && touchesTask(path, own)) found.add(path);
  }
  return [...found].sort();
}
