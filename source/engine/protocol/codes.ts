/**
 * The single enum of outcome codes (seed 000 §3.3 `code`, plus the additions docs/ARCHITECTURE.md allows).
 * Every code carries its verdict and a one-line remediation, used by REPORT.md, BLOCKED.json and
 * every front end, so a human always learns what to do next.
 */

export type Verdict = 'success' | 'stop' | 'blocked';

interface CodeInfo {
  readonly verdict: Verdict;
  readonly remediation: string;
}

const codeTable = {
  SUCCESS: {
    verdict: 'success',
    remediation: 'Nothing to fix: the tick passed scope, diff and verification checks.',
  },
  STOP_SCOPE_VIOLATION_FORBIDDEN: {
    verdict: 'stop',
    remediation:
      'The builder touched a forbidden path (see scope.violations); the repo was rolled back. Narrow the task or adjust scope.default_forbidden_globs deliberately.',
  },
  STOP_SCOPE_VIOLATION_OUTSIDE_ALLOWED: {
    verdict: 'stop',
    remediation:
      'The builder touched paths outside the allowed globs; the repo was rolled back. Widen the task scope (or scope.default_allowed_globs) if those paths really belong to the task.',
  },
  STOP_SCOPE_VIOLATION_NEW_FILE: {
    verdict: 'stop',
    remediation:
      'The builder created files while allow_new_files=false; the repo was rolled back. Ask for a task with allow_new_files=true if new files are needed.',
  },
  STOP_LOCKFILE_CHANGE_FORBIDDEN: {
    verdict: 'stop',
    remediation:
      'A lockfile changed while allow_lockfile_changes=false; the repo was rolled back. Run a task that allows lockfile changes if a dependency change is intended.',
  },
  STOP_DIFF_TOO_LARGE: {
    verdict: 'stop',
    remediation:
      'The diff exceeded the task diff limits; the repo was rolled back. Split the work into smaller tasks or raise diff_limits in relais.config.json.',
  },
  STOP_VERIFY_FAILED_FAST: {
    verdict: 'stop',
    remediation:
      'A fast verification failed; the repo was rolled back. Read the verify log in the history folder and let the next task fix the failure.',
  },
  STOP_VERIFY_FAILED_SLOW: {
    verdict: 'stop',
    remediation:
      'A slow verification failed; the repo was rolled back. Read the verify log in the history folder and let the next task fix the failure.',
  },
  STOP_VERIFY_TAINTED: {
    verdict: 'stop',
    remediation:
      'A verification template was unknown or a parameter failed the taint checks; nothing was executed and the repo was rolled back. Use template ids and plain parameter values from relais.config.json.',
  },
  STOP_VERIFY_ONLY_SIDE_EFFECTS: {
    verdict: 'stop',
    remediation:
      'A verify_only task changed files; the repo was rolled back. verify_only tasks must leave the tree untouched.',
  },
  STOP_QUESTION_SIDE_EFFECTS: {
    verdict: 'stop',
    remediation:
      'A question task changed files; the repo was rolled back. Answer the question (task.question) and run again.',
  },
  STOP_RUNNER_OWNED_MUTATION: {
    verdict: 'stop',
    remediation:
      'The builder changed runner-owned files (relais/ workspace or relais.config.json); they were restored and the repo rolled back. Check the builder prompt and tools.',
  },
  STOP_GIT_OBJECT_CORRUPTED: {
    verdict: 'stop',
    remediation:
      'An object that existed before the tick was changed, replaced or removed in .git/objects; nothing was committed. Run `git fsck --full`, restore the damaged objects from a clone or backup, then run again.',
  },
  STOP_TREE_CHANGED_DURING_VERIFY: {
    verdict: 'stop',
    remediation:
      'The files changed between judging and the end of verification, so what passed is not what would be committed; the repo was rolled back. Find what writes to the tree meanwhile (a background process, a watcher, a check that edits sources) and stop it.',
  },
  STOP_BUILDER_OUTPUT_INVALID: {
    verdict: 'stop',
    remediation:
      'The builder did not answer with a valid builder_result JSON; the repo was rolled back. Check the builder prompt, or set builder.claude_code.strict_builder_json=false to judge from git alone.',
  },
  STOP_HEAD_MOVED: {
    verdict: 'stop',
    remediation:
      'HEAD or the current branch moved during the tick in a way the builder diff does not explain; the runner restored the branch to base_commit. Make sure nothing else commits or checks out in this repo while relais runs.',
  },
  STOP_BUILDER_TIMEOUT: {
    verdict: 'stop',
    remediation:
      'The external builder driver ran past builder.cursor.timeout_seconds; its whole process tree was killed and the repo rolled back. Make the driver faster or raise the timeout.',
  },
  STOP_SANDBOX_WRITE_REFUSED: {
    verdict: 'stop',
    remediation:
      "The builder failed after the sandbox refused one of its writes (read-only file system: a path outside the task's allowed paths, or .git/ or relais/); nothing there changed and the repo was rolled back. If the write belongs to the task, widen its scope.allowed_globs (and scope.default_allowed_globs); otherwise tell the builder to stay in scope.",
  },
  STOP_PATCH_INVALID: {
    verdict: 'stop',
    remediation:
      'The task patch was refused before anything was applied (unsafe or unreadable path, binary or malformed diff) or git could not apply it. Ask for a plain text patch whose paths stay inside the allowed scope.',
  },
  STOP_MILESTONE_CHANGED: {
    verdict: 'stop',
    remediation:
      'In milestone mode the orchestrator moved to another milestone, so the loop stopped before building anything. Review the milestone, then run `relais loop` again (or use --mode autonomous).',
  },
  STOP_PLAN_REPEATED: {
    verdict: 'stop',
    remediation:
      'The orchestrator proposed again a plan that already failed for this task (same task fingerprint); the runner refused it before building. Answer the question with a different approach, or change the task in specs/TASKS.md.',
  },
  STOP_INTERRUPTED: {
    verdict: 'stop',
    remediation:
      'The tick was interrupted (agent failure, timeout, signal or write failure) and rolled back. Read the report detail, fix the cause, then run again.',
  },
  STOP_ROLLBACK_FAILED: {
    verdict: 'stop',
    remediation:
      'The rollback did not finish, so the repository may still hold part of the tick (see the rollback notes); relais/INFLIGHT.json stays. Run `relais run` again: it finishes the recovery first, or its BLOCKED detail names the exact command to run.',
  },
  STOP_SCOPE_OUTSIDE_CONFIG: {
    verdict: 'stop',
    remediation:
      'The task asked for paths that scope.default_allowed_globs in relais.config.json excludes, so nothing ran. Add those paths to scope.default_allowed_globs (or run `relais init` to derive the fence from the repository), then run again.',
  },
  BLOCKED_BUDGET_EXHAUSTED: {
    verdict: 'blocked',
    remediation:
      'The milestone budget cannot cover one more worst-case tick. Raise budgets.per_milestone in relais.config.json or start a new milestone.',
  },
  BLOCKED_BUDGET_CAP: {
    verdict: 'blocked',
    remediation:
      'A hard cap is reached: a per-milestone counter in budgets.per_milestone, or a run-wide cap of this loop (loop.* or --max-ticks). Raise the cap deliberately or start a new milestone.',
  },
  BLOCKED_DIRTY_WORKTREE: {
    verdict: 'blocked',
    remediation:
      'The worktree has uncommitted or untracked changes (or an unfinished merge). Commit, stash or remove them (git status), then run again.',
  },
  BLOCKED_LOCK_HELD: {
    verdict: 'blocked',
    remediation:
      'Another relais run holds relais/lock.json. Wait for it to finish; if no relais process is running, delete relais/lock.json.',
  },
  BLOCKED_CRASH_RECOVERY_REQUIRED: {
    verdict: 'blocked',
    remediation:
      'An interrupted run or a corrupt runner-owned file needs a decision relais will not take alone; the detail says what it found and the exact command to run (for a corrupt STATE.json: restore a copy you trust, or run `relais init --reset-ledger`, which keeps it aside and touches nothing else; for another runner file: move it aside; counters are never reset silently).',
  },
  BLOCKED_ORCHESTRATOR_OUTPUT_INVALID: {
    verdict: 'blocked',
    remediation:
      'The orchestrator answered twice without a valid task JSON. Check relais/prompts/orchestrator.*.txt and the model, then run again.',
  },
  BLOCKED_ORCHESTRATOR_QUESTION: {
    verdict: 'blocked',
    remediation:
      'The orchestrator asked a question instead of proposing a task (see detail); only you can answer it. Put the answer where it reads it (the PRD, the goal, relais/FACTS.md), or run the work under `ralphy start`, which asks you; then run again.',
  },
  BLOCKED_HISTORY_CAP_CLEANUP_REQUIRED: {
    verdict: 'blocked',
    remediation:
      'relais/history is above history.max_mb and an old run folder could not be deleted (see detail). Fix its permissions or remove it by hand, or raise history.max_mb.',
  },
  BLOCKED_MISSING_CONFIG: {
    verdict: 'blocked',
    remediation:
      'relais.config.json or the git repository is missing or invalid (see detail). Run `relais init` at the repository root and fix the named field.',
  },
  BLOCKED_AGENT_CLI_MISSING: {
    verdict: 'blocked',
    remediation:
      'The agent CLI was not found. Install Claude Code (npm install -g @anthropic-ai/claude-code) or set claude_code_cli.command to its path.',
  },
  BLOCKED_SANDBOX_UNAVAILABLE: {
    verdict: 'blocked',
    remediation:
      'No OS sandbox can be started here (see detail; `relais doctor` names the fix). Install bubblewrap and allow user namespaces, or set "sandbox": "off" in relais.config.json to run agents unprotected.',
  },
} as const satisfies Record<string, CodeInfo>;

export type Code = keyof typeof codeTable;

export const ALL_CODES = Object.keys(codeTable) as [Code, ...Code[]];

export function verdictOf(code: Code): Verdict {
  return codeTable[code].verdict;
}

export function remediationOf(code: Code): string {
  return codeTable[code].remediation;
}
