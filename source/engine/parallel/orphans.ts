import type { WorkflowContext } from '../workflow/context.js';
import type { WorktreeManager } from './worktrees.js';

/**
 * On every start of IMPLEMENTATION (issue 19): a lane worktree still marked running was left by
 * a runner that died (kill -9, a crash, a lost terminal): the workflow's lock proves no other
 * runner uses it. It is never reused: its interrupted tick is recovered, everything in it is kept
 * (refs/relais/recovered/lanes/<name>, relais/recovered/lane-<name>/), then it is removed and its
 * task starts again from the integration branch. Kept worktrees (failures) stay for a human.
 */
export async function recoverOrphanLanes(ctx: WorkflowContext, worktrees: WorktreeManager): Promise<void> {
  const { records, invalid } = await worktrees.list();
  for (const problem of invalid)
    ctx.bus.emit({
      type: 'log',
      level: 'warn',
      message: `unreadable lane record relais/lanes/${problem}; move it aside after checking relais worktrees list`,
    });
  for (const record of records) {
    if (record.state === 'kept') {
      ctx.bus.emit({
        type: 'log',
        level: 'info',
        message: `kept worktree ${record.path} (task ${record.task}): ${record.detail ?? ''}; relais worktrees prune removes it`,
      });
      continue;
    }
    const where = await worktrees.preserveAndRemove(record);
    ctx.bus.emit({
      type: 'log',
      level: 'warn',
      message: `orphaned lane ${record.name} (task ${record.task}, left by pid ${record.pid}) recovered and removed; its work is kept at ${where}`,
    });
  }
}
