import { join } from 'node:path';
import { readGitSideStateAgain, sideStateChange } from '../judge/git-side-state.js';
import { checkAndRestore, type ProtectedGuard } from '../judge/protected-files.js';
import { worktreeStatus } from '../judge/repo.js';
import type { Code } from '../protocol/codes.js';
import type { Task } from '../protocol/task.js';
import { sandboxForTree, verificationSandbox } from '../sandbox/sandbox.js';
import type { BuildGuards } from '../session/judge-phase.js';
import { recordAgentInFlight } from '../session/recover.js';
import { planVerification } from '../verify/plan.js';
import { refusedWriteHint, runVerifications } from '../verify/run-verifications.js';
import { relativeToRoot, type TickContext } from './tick-context.js';

/**
 * VERIFY (Appendix A5), then a second look: verification runs code the builder wrote (its
 * tests), so whatever it changed in protected places is caught and undone before anything else
 * runs, on the success path too.
 */

/**
 * Runs the task's verification. `beforeRuns` takes the integrity guards right before the first
 * command; it is not called when no command will run (a tainted plan, or none requested), since
 * then only the runner runs between JUDGE and the commit and there is nothing to guard against.
 * Returns whether any command ran.
 */
export async function verify(
  ctx: TickContext,
  task: Task,
  beforeRuns: () => Promise<void> = async () => undefined,
): Promise<boolean> {
  const { setup, record } = ctx;
  const plan = await planVerification(task.verification, setup.config.verification, setup.facts.root);
  if (!plan.ok) {
    // A5 rows 1-2: nothing is executed.
    record.code = 'STOP_VERIFY_TAINTED';
    record.detail = plan.problems.join('; ');
    return false;
  }
  if (plan.runs.length === 0) return false;
  await beforeRuns();
  const logPath =
    record.historyDir && setup.config.history.include_verify_log
      ? join(record.historyDir, 'verify.log')
      : null;
  if (logPath) record.verifyLogPath = relativeToRoot(setup, logPath);
  const outcome = await runVerifications(plan.runs, {
    onRunStart: () => ctx.ledger.add({ verify_runs: 1 }),
    cwd: setup.facts.root,
    logPath,
    maxLogBytes: setup.config.verification.max_log_bytes_per_run,
    bus: ctx.options.bus,
    signal: ctx.signal,
    env: ctx.options.env,
    // Writable: the task's own paths (as its builder's) and the folders the user lets every
    // check write (`sandbox.verification_writable`: a tool's cache); `.git/`, the workspace and
    // the rest of the tree read-only, no network. What they change inside that is judged
    // afterwards: the verdict is bound to the verified tree (STOP_TREE_CHANGED_DURING_VERIFY),
    // and a verify-only task's writes stop it.
    sandbox: verificationSandbox(sandboxForTree(setup.sandbox, setup.facts.root), task.scope.allowed_globs),
    // Issue 14: a verification orphaned by a SIGKILLed runner is ended by the next run's recovery.
    onSpawn: (pid) => recordAgentInFlight(setup.paths, pid),
  });
  record.runs = outcome.runs;
  if (outcome.aborted) {
    record.code = 'STOP_INTERRUPTED';
    record.detail = `verification: ${ctx.interruption() ?? 'interrupted'}`;
  } else if (outcome.failedPhase) {
    // A5 rows 3-4: the first failure stops; slow never runs after a fast failure.
    const failed = outcome.runs.at(-1);
    record.code = outcome.failedPhase === 'fast' ? 'STOP_VERIFY_FAILED_FAST' : 'STOP_VERIFY_FAILED_SLOW';
    record.detail = failed
      ? `${failed.template_id} ${failed.timed_out ? 'timed out' : `exited ${failed.exit_code}`}${refusedWriteHint(outcome.refused)}`.slice(
          0,
          4000,
        )
      : null;
  }
  return true;
}

/** Changes verification made where nothing may change; restores them and returns the STOP. */
export async function checkAfterVerify(
  ctx: TickContext,
  guards: BuildGuards,
  workspaceGuard: ProtectedGuard,
  task: Task,
): Promise<{ code: Code; detail: string } | null> {
  const { setup } = ctx;
  const workspace = await checkAndRestore(workspaceGuard, setup.facts, setup.paths);
  const gitControl = await checkAndRestore(guards.gitGuard, setup.facts, setup.paths);
  const hidden = sideStateChange(
    guards.sideBefore,
    await readGitSideStateAgain(setup.git, setup.facts.gitDir, guards.sideBefore, guards.indexBefore),
  );
  const list = (paths: string[]) => paths.slice(0, 5).join(', ');
  if (workspace.changes.length > 0) {
    return {
      code: 'STOP_RUNNER_OWNED_MUTATION',
      detail: `verification changed runner-owned files: ${list(workspace.changes.map((c) => c.display))}`,
    };
  }
  const forbidden = [
    ...gitControl.changes.map((c) => c.display),
    ...hidden.newFlags,
    ...hidden.newReplaceRefs,
  ];
  if (forbidden.length > 0)
    return {
      code: 'STOP_SCOPE_VIOLATION_FORBIDDEN',
      detail: `verification changed git control state: ${list(forbidden)}`,
    };
  if (task.task_kind === 'question' || task.task_kind === 'verify_only') {
    // A4 rows 7-8 hold at the end of the tick, not only after the builder.
    const changed = await worktreeStatus(setup.git);
    if (changed.length > 0) {
      const code =
        task.task_kind === 'question' ? 'STOP_QUESTION_SIDE_EFFECTS' : 'STOP_VERIFY_ONLY_SIDE_EFFECTS';
      return {
        code,
        detail: `verification changed ${changed.length} path(s): ${list(changed.map((e) => e.slice(3)))}`,
      };
    }
  }
  return null;
}
