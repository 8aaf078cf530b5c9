import { realpath, stat } from 'node:fs/promises';
import { Git } from '../judge/git.js';
import { acquireLock, loadConfig } from '../session/index.js';
import { workspacePaths } from '../workspace/paths.js';
import { WorktreeManager } from './worktrees.js';

/**
 * `relais worktrees list|prune` (issue 19): the runner-owned worktrees of parallel lanes. `list`
 * reads only. `prune` takes the workspace lock (never while a workflow runs), then removes every
 * lane worktree, each after its work is kept (refs/relais/recovered/lanes/<name>).
 */

export interface WorktreeRow {
  readonly name: string;
  readonly task: number;
  readonly state: 'running' | 'kept';
  readonly path: string;
  readonly branch: string;
  readonly present: boolean;
  readonly dirty: boolean;
  readonly detail: string | null;
}

export type WorktreesOutcome =
  | { ok: true; action: 'list'; rows: WorktreeRow[]; problems: string[] }
  | { ok: true; action: 'prune'; removed: Array<{ name: string; kept: string }>; problems: string[] }
  | { ok: false; message: string };

export async function worktreesEntry(
  given: string,
  env: NodeJS.ProcessEnv,
  action: 'list' | 'prune',
): Promise<WorktreesOutcome> {
  const root = await realpath(given).catch(() => given);
  const loaded = await loadConfig(root, env);
  if (!loaded.ok) return { ok: false, message: `${loaded.detail} (run relais init at the repository root)` };
  const paths = workspacePaths(root, loaded.config.workspace_dir);
  const manager = new WorktreeManager(paths, env);
  if (action === 'list') {
    const { records, invalid } = await manager.list();
    const rows: WorktreeRow[] = [];
    for (const r of records) {
      const present = (await stat(r.path).catch(() => null)) !== null;
      const status = present
        ? await new Git(r.path, env).run(['status', '--porcelain', '--untracked-files=all'])
        : null;
      rows.push({
        name: r.name,
        task: r.task,
        state: r.state,
        path: r.path,
        branch: r.branch,
        present,
        dirty: (status?.stdout.length ?? 0) > 0,
        detail: r.detail,
      });
    }
    return { ok: true, action, rows, problems: invalid };
  }
  const lock = await acquireLock(paths.lock, 'relais worktrees prune');
  if (!lock.ok) return { ok: false, message: `${lock.detail}: prune when the workflow is not running` };
  try {
    const { records, invalid } = await manager.list();
    const removed: Array<{ name: string; kept: string }> = [];
    for (const record of records)
      removed.push({ name: record.name, kept: await manager.preserveAndRemove(record) });
    await new Git(root, env).run(['worktree', 'prune']);
    return { ok: true, action, removed, problems: invalid };
  } finally {
    await lock.lock.release();
  }
}
