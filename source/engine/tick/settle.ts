import { commitJudgedTree } from '../judge/commit.js';
import { rollback } from '../judge/rollback.js';
import { undoBeyondGit } from '../judge/stop-cleanup.js';
import { TreeChangedError } from '../judge/verified-tree.js';
import { verdictOf } from '../protocol/codes.js';
import type { Task } from '../protocol/task.js';
import type { BuildGuards } from '../session/judge-phase.js';
import { recordCommitInFlight, recordTickHead } from '../session/recover.js';
import { oneLine } from '../workspace/printable.js';
import type { TickContext } from './tick-context.js';

/**
 * The end of a tick that ran its builder: commit the judged tree on success, otherwise roll back
 * (Appendix B). A rollback that cannot finish cleanly turns the outcome into STOP_ROLLBACK_FAILED.
 */
export async function settle(
  ctx: TickContext,
  task: Task,
  guards: BuildGuards,
  /** The tree verification ran on (verified-tree.ts): the commit must record exactly that tree. */
  verifiedTree?: string,
): Promise<void> {
  const { setup, record } = ctx;
  const judge = record.judge;
  if (verdictOf(record.code) === 'success' && judge) {
    if (task.task_kind === 'execute' && setup.config.runner.commit_on_success) {
      try {
        const committed = await commitJudgedTree(
          setup.git,
          setup.facts,
          judge.touched.index,
          commitMessage(task, ctx),
          (commit) => recordCommitInFlight(setup.paths, commit),
          verifiedTree,
          // No verification command ran since the judge's full-tree pass: only the runner wrote
          // since, so only the staged paths can differ from the commit (a stray process writing
          // elsewhere leaves a dirty tree that the next preflight's full status refuses).
          record.runs.length === 0
            ? judge.touched.files.filter((f) => f.source === 'git').map((f) => f.path)
            : undefined,
        );
        record.commit = committed.commit;
        record.notes.push(...committed.notes);
        return;
      } catch (error) {
        if (!(error instanceof TreeChangedError)) throw error;
        record.code = 'STOP_TREE_CHANGED_DURING_VERIFY';
        record.detail = error.message;
      }
    } else return;
  }
  await rollBack(ctx, guards);
}

export async function rollBack(ctx: TickContext, guards: BuildGuards): Promise<void> {
  const { setup, record } = ctx;
  record.rollback.performed = true;
  try {
    record.rollback.notes.push(...(await undoBeyondGit(setup.facts, setup.paths, guards)));
    const result = await rollback({
      git: setup.git,
      facts: setup.facts,
      paths: setup.paths,
      gitGuard: guards.gitGuard,
      ignoredBefore: guards.ignoredBefore,
      sideBefore: guards.sideBefore,
      verification: ctx.verifyIgnored,
      onBranchReset: () => recordTickHead(setup.paths, setup.facts.head),
    });
    record.rollback.clean = result.clean;
    record.rollback.notes.push(...result.notes);
    if (!result.clean) {
      // Issue 14: never "rolled back" when it was not; INFLIGHT.json stays for the next run.
      record.detail = `rollback did not leave the tree clean (original outcome ${record.code}: ${record.detail ?? ''})`;
      record.code = 'STOP_ROLLBACK_FAILED';
    }
  } catch (error) {
    record.rollback.clean = false;
    record.detail = `rollback failed: ${(error as Error).message} (original outcome ${record.code}: ${record.detail ?? ''})`;
    record.code = 'STOP_ROLLBACK_FAILED';
  }
}

function commitMessage(task: Task, ctx: TickContext): string {
  const subject = oneLine(`relais(${task.task_id}): ${task.intent}`, 72);
  return `${subject}\n\n${task.intent}\n\nRelais-Run: ${ctx.record.runId}\nRelais-Blast-Radius: ${ctx.record.judge?.blastLine ?? ''}\n`;
}
