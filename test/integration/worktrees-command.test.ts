import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { WorktreeManager } from '../../source/engine/parallel/worktrees.js';
import { workspacePaths } from '../../source/engine/workspace/paths.js';
import { TestProject } from '../support/project.js';

// `relais worktrees list|prune` (issue 19) on real worktrees the runner made: prune keeps every
// commit and uncommitted change at refs/relais/recovered/lanes/<name> before removing anything,
// and refuses while a run holds the lock.

let project: TestProject | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

it('lists kept worktrees, then prunes them without losing their work', async () => {
  project = TestProject.create();
  const p = project;
  const manager = new WorktreeManager(workspacePaths(p.root, 'relais'), p.env);
  const tree = await manager.create(3, p.head(), new Date());
  // Never reused: a second attempt at the same task gets a new name.
  const again = await manager.create(3, p.head(), new Date());
  expect([tree.name, again.name]).toEqual(['task-3-1', 'task-3-2']);
  await manager.keep(tree, 3, 'merge_failed: conflict in src/a.ts', new Date());
  writeFileSync(join(tree.path, 'src/a.ts'), 'export const a = 42;\n');

  const list = p.cliSync(['worktrees', 'list']);
  expect(list.code).toBe(0);
  expect(list.stdout).toContain(`task-3-1  task 3  kept, uncommitted changes  ${tree.path}`);
  expect(list.stdout).toContain('merge_failed: conflict in src/a.ts');
  expect(list.stdout).toContain('task-3-2  task 3  running');

  const pruned = p.cliSync(['worktrees', 'prune', '--json']);
  expect(pruned.code, pruned.stderr).toBe(0);
  const outcome = JSON.parse(pruned.stdout);
  expect(outcome.removed.map((r: { name: string }) => r.name)).toEqual(['task-3-1', 'task-3-2']);
  expect(existsSync(tree.path)).toBe(false);
  expect(p.git('worktree', 'list').trim().split('\n')).toHaveLength(1);
  expect(p.git('branch', '--list', 'relais/lanes/*').trim()).toBe('');
  // The uncommitted change is kept, committed on the recovered ref; the clean attempt needed none.
  expect(p.git('show', 'refs/relais/recovered/lanes/task-3-1:src/a.ts')).toBe('export const a = 42;\n');
  expect(p.git('for-each-ref', 'refs/relais/recovered/lanes/task-3-2').trim()).toBe('');
  expect(p.cliSync(['worktrees', 'list']).stdout).toContain('No lane worktree.');
  expect(p.cliSync(['worktrees', 'sideways']).code).toBe(2);
}, 180_000);
