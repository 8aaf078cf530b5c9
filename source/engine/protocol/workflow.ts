import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';
import { blastRadiusSchema, verificationRunSchema } from './report.js';

/**
 * relais/WORKFLOW.json: the Ralphy workflow (seed 002 §7 state.json fields, §8 states), plus the
 * current task, the reason of a failure, and what a resume needs. Written atomically on every
 * transition and validated on read.
 */

export const WORKFLOW_STATES = [
  'IDLE',
  /** Seed 004: the Relay planner asks the human what changes the spec, before it is written. */
  'PLANNING',
  'SPECIFICATION',
  'AWAITING_SPEC_VALIDATION',
  'IMPLEMENTATION',
  'QA',
  'AWAITING_QA_VALIDATION',
  'PR',
  'COMPLETED',
  'FAILED',
  'REJECTED',
] as const;

export type WorkflowStateName = (typeof WORKFLOW_STATES)[number];

/** The running phases, in the order a workflow goes (seed 002 §8, seed 004's PLANNING first). */
export const PHASE_ORDER = [
  'PLANNING',
  'SPECIFICATION',
  'AWAITING_SPEC_VALIDATION',
  'IMPLEMENTATION',
  'QA',
  'AWAITING_QA_VALIDATION',
  'PR',
] as const satisfies readonly WorkflowStateName[];

export const FAILURE_REASONS = [
  'circuit_breaker_triggered',
  'phase_timeout',
  'agent_failed',
  'aborted',
  'rejected_at_qa',
  'needs_input',
  'invalid_output',
  'scope_violation',
  'tick_stopped',
  'verification_failed',
  'budget_exhausted',
  'pr_failed',
  'planning_failed',
  'cycle_stopped',
  'merge_failed',
  'phase_budget_exhausted',
  'integrity_violation',
  'scope_outside_config',
] as const;

export type FailureReason = (typeof FAILURE_REASONS)[number];

/** What to do about each way a workflow fails: shown by the front ends, `ralphy status` and the README. */
const FAILURE_REMEDIATIONS: Record<FailureReason, string> = {
  circuit_breaker_triggered:
    'The agent was stuck (no output, the same error, no task completed, or too much output) and was stopped. Read the breaker lines, fix the cause, then ralphy start resumes the phase; tune circuit_breaker in relais.config.json if the threshold is wrong for your project.',
  phase_timeout:
    'The phase ran past workflow.timeouts. Raise that timeout if the work is legitimately long, then ralphy start resumes the phase.',
  agent_failed:
    'The agent did not finish after its retries (CLI error, timeout, or no EXIT_SIGNAL: true). Read its last lines, fix the cause (login, model, prompt), then ralphy start resumes.',
  aborted:
    "Stopped on request (the app's a key, or ralphy abort). ralphy start resumes from the last completed phase.",
  rejected_at_qa:
    'The QA report was rejected at the second gate. Fix the findings on the feature branch, commit, then ralphy start (answer n to start over, or move WORKFLOW.json aside).',
  needs_input:
    // Said to whoever reads it, at the terminal or not (the newcomer's pass, defect 11: a human who
    // declined the planner was told "nobody answered, run it in a terminal").
    "An agent's question is still open: nobody could answer it (no terminal, and --yes cannot answer questions), or you declined it and chose to stop there. ralphy start, in a terminal, asks it again; the answers so far are kept.",
  invalid_output:
    'The agent produced files the runner cannot read (a malformed TASKS.md). Fix them by hand or run the phase again with ralphy start.',
  scope_violation:
    'The agent changed files outside what its phase may touch; everything it did was rolled back. Narrow the prompt, or widen scope.default_allowed_globs if those files belong to the work.',
  tick_stopped:
    'A task found no verified tick within workflow.max_ticks_per_task, or a tick was blocked (with best of N: none of its attempts was verified, and each is kept, relais worktrees list). Read relais/REPORT.md, fix the cause, then ralphy start resumes the implementation.',
  verification_failed:
    "The final tree fails the project's checks, so no pull request was opened. Fix it on the feature branch, commit, then ralphy start resumes the PR phase.",
  budget_exhausted:
    'The workflow reached workflow.max_cost_usd. Raise it deliberately, then ralphy start resumes.',
  pr_failed:
    'The PR phase could not run (no feature branch recorded). Push the branch and open the pull request by hand.',
  planning_failed:
    "The planner's answer broke its rules twice (the detail quotes the runner's check; nothing of it was executed), or a file under relais/planner/ is unreadable. Check relais/prompts/planner.system.txt and agents.planner, or move the named file aside; ralphy start resumes planning with the answers kept.",
  phase_budget_exhausted:
    'A phase reached its own cap, workflow.phases.<phase>.max_cost_usd or max_calls (ralphy status shows the spend per phase). Raise it deliberately (relais config set), then ralphy start resumes the phase.',
  cycle_stopped:
    'The cycle (`relais cycle`) stopped: it needs a human, or its tasks kept failing. relais status shows why; fix it (relais cycle --resume ends a pause), then ralphy start resumes the implementation.',
  integrity_violation:
    'The agent, or the checks run on its work, broke what the runner guards beyond scope: an existing git object was changed (STOP_GIT_OBJECT_CORRUPTED), or files changed while the checks ran, so what passed is not what would be committed (STOP_TREE_CHANGED_DURING_VERIFY). Everything was rolled back and its work kept aside (see detail), unless the rollback itself failed (STOP_ROLLBACK_FAILED: the in-flight record stays, and the next ralphy start recovers or says what to do). For a damaged object run `git fsck --full` and restore it from a clone; otherwise find what writes to the tree during the checks (a background process, a check that edits sources), then ralphy start resumes the phase.',
  scope_outside_config:
    'A task of TASKS.md names files that scope.default_allowed_globs in relais.config.json excludes (package.json, say, under the src/** and test/** fence relais init derives), so no step could write them and the task could never be done. Nothing was built for it. Widen the fence: add those files to scope.default_allowed_globs, commit the config, then ralphy start resumes the implementation.',
  merge_failed:
    "A parallel lane's verified task could not land (a rebase conflict, or a check failing on the merged tree) even after a re-run on the new base, and nobody approved another try. Its worktrees are kept (relais worktrees list); resolve it by hand or give the tasks scopes that do not overlap, then ralphy start resumes the implementation.",
};

export function remediationOfFailure(reason: FailureReason): string {
  return FAILURE_REMEDIATIONS[reason];
}

/**
 * A branch name as the runner passes it to git argv: no leading "-" (never read as an option), no
 * "..", "//", "@{", no trailing "/" or ".lock" (git check-ref-format's rules that matter here).
 */
const SAFE_BRANCH = /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*@\{)[^\s~^:?*[\\]+(?<!\/)(?<!\.lock)$/;

export function isSafeBranchName(name: string): boolean {
  const control = [...name].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
  return name.length <= 200 && !control && SAFE_BRANCH.test(name);
}

const branchName = lazySchema(() => z.string().refine(isSafeBranchName, 'not a safe git branch name'));

export const breakerSnapshotSchema = lazySchema(() =>
  z.strictObject({
    state: z.enum(['closed', 'half_open', 'open', 'paused']),
    attempts: z.int().min(0),
    max_attempts: z.int().min(1),
    last_trigger: z.string().nullable(),
  }),
);

/**
 * One gate and what became of it. `unanswered`: nobody could answer (no terminal, no --yes), so
 * nothing was decided and the gate waits. Files written before it existed recorded that case as
 * `reject` by `nobody`; they still load, and are read the same way (see isUnanswered).
 */
/**
 * What the PR phase did (defect 5: "✓ PR" only when something left the machine): `opened` a pull
 * request, `pushed` the branch without opening one (no gh, gh refused), or `not_pushed` (no remote,
 * the push refused): the branch is ready here only. `detail` says why, for the panels.
 */
export const prOutcomeSchema = lazySchema(() =>
  z.strictObject({
    kind: z.enum(['opened', 'pushed', 'not_pushed']),
    detail: z.string().max(500),
  }),
);
export type PrOutcome = z.infer<typeof prOutcomeSchema>;

export const gateDecisionSchema = lazySchema(() =>
  z.strictObject({
    gate: z.enum(['spec', 'qa', 'input', 'resume', 'plan']),
    /** `aborted`: an abort ended the wait (its `reason` says by what); it decided nothing either. */
    decision: z.enum(['approve', 'reject', 'answer', 'unanswered', 'aborted']),
    at: z.iso.datetime(),
    by: z.enum(['human', 'auto', 'nobody']),
    /** Why a human rejected (optional; issue 16 item 5): handed to the agent's next attempt. */
    reason: z.string().max(2000).optional(),
    /**
     * Set on a decision carried over from an earlier workflow (a rejected spec's reason, handed to
     * the new spec agent): that workflow's branch. It is not this workflow's decision.
     */
    earlier_branch: z.string().max(300).optional(),
  }),
);

/** A parallel lane's name (issue 19): `task-<task number>-<attempt>`, its worktree's and branch's. */
export const LANE_NAME = /^task-\d{1,6}-\d{1,4}$/;
const laneName = lazySchema(() => z.string().regex(LANE_NAME));

/** The most lanes whose breaker WORKFLOW.json keeps (the running ones and the latest ended). */
export const KEPT_LANE_BREAKERS = 32;

/**
 * Best of N (issue 19): how the runner chose among the attempts at one task, by its own verdict
 * only (verified first, then the smallest diff within the task's scope), and why.
 */
export const attemptRecordSchema = lazySchema(() =>
  z.strictObject({
    lane: laneName,
    /** The runner's verdict on this attempt: its tick was judged in scope and verified. */
    verified: z.boolean(),
    /** Lines added plus deleted on the attempt's branch, from the integration branch (null: not verified). */
    lines_changed: z.int().min(0).nullable(),
    files_changed: z.int().min(0).nullable(),
    /** Why it was not verified, or what it changed. */
    detail: z.string().max(500),
  }),
);

export const selectionSchema = lazySchema(() =>
  z.strictObject({
    attempts: z.int().min(2).max(8),
    /** The attempt that went to the merge queue; null when none was verified. */
    winner: laneName.nullable(),
    reason: z.string().max(1000),
    candidates: z.array(attemptRecordSchema).max(8),
  }),
);

/**
 * One task of specs/TASKS.md as the runner saw it: what the agent claimed and what the runner
 * verified are kept apart, so "the agent said done" is never read as "done".
 */
export const TASK_VERDICT = lazySchema(() => z.enum(['verified', 'rejected']));
export type TaskVerdict = z.infer<typeof TASK_VERDICT>;

/**
 * A plan that failed for a task of the `ticks` engine (issue 15), kept so a resumed workflow still
 * refuses it: the signature session/plan-fingerprint.ts compares, and what the report says of it.
 */
export const failedPlanSchema = lazySchema(() =>
  z.strictObject({
    fingerprint: z.string().max(64),
    code: z.string().max(80),
    intent: z.string().max(300),
    kind: z.string().max(40),
    scope: z.array(z.string().max(202)).max(128),
    verification: z.array(z.string().max(80)).max(32),
    words: z.array(z.string().max(200)).max(400),
  }),
);
export type FailedPlan = z.infer<typeof failedPlanSchema>;

export const taskRecordSchema = lazySchema(() =>
  z.strictObject({
    number: z.int().min(0),
    title: z.string().max(300),
    status: z.enum(['pending', 'in_progress', 'completed']),
    claimed: z.string().max(500).nullable(),
    verified: z.string().max(500).nullable(),
    /**
     * The runner's verdict on the task, and the only source of "done" a front end may show:
     * `verified` once a judged, verified change completed it, `rejected` while its last attempt was
     * stopped or blocked (`verified` then says why). Files written before it existed load as null.
     */
    verdict: TASK_VERDICT.nullable().default(null),
    commits: z.array(z.string().min(7).max(64)).max(100),
    ticks: z.int().min(0),
    /** Best of N: the attempts and the runner's choice among them; null when the task ran once. */
    selection: selectionSchema.nullable().default(null),
    /** Plans that already failed for this task (ticks engine); files written before it load as none. */
    failed_plans: z.array(failedPlanSchema).max(20).default([]),
  }),
);

/** The agent phases with their own spend and call caps (config `workflow.phases`). */
export const BUDGET_PHASES = ['PLANNING', 'SPECIFICATION', 'IMPLEMENTATION', 'QA'] as const;
export type BudgetPhase = (typeof BUDGET_PHASES)[number];

/** One phase's spend (summed from what each agent call reported) and the caps it runs under. */
export const phaseSpendSchema = lazySchema(() =>
  z.strictObject({
    /** Cap-guarding: reported costs plus `unreported_usd`. */
    cost_usd: z.number().min(0),
    calls: z.int().min(0),
    /**
     * The part of `cost_usd` that is no spend but the maximum of calls that never reported a cost
     * (killed, interrupted), held against the caps; and how many such calls. Older files: none.
     */
    unreported_usd: z.number().min(0).default(0),
    unreported_calls: z.int().min(0).default(0),
    max_cost_usd: z.number().min(0).nullable(),
    max_calls: z.int().min(1).nullable(),
  }),
);
export type PhaseSpend = z.infer<typeof phaseSpendSchema>;

export const workflowFileSchema = lazySchema(() =>
  z.strictObject({
    schema_version: z.literal(1),
    /** The §8 state; `status` says whether the process in it is still alive. */
    state: z.enum(WORKFLOW_STATES),
    phase: z.string(),
    status: z.enum(['running', 'waiting', 'completed', 'failed', 'rejected', 'interrupted']),
    started_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    tasks_completed: z.int().min(0),
    tasks_total: z.int().min(0),
    current_task: z.string().nullable(),
    circuit_breaker: breakerSnapshotSchema,
    /**
     * Issue 19: each parallel lane's own circuit breaker, by lane name (`circuit_breaker` is the
     * breaker of the running phase with one lane). Older files: none.
     */
    lane_breakers: z
      .record(laneName, breakerSnapshotSchema)
      .refine((r) => Object.keys(r).length <= KEPT_LANE_BREAKERS, `at most ${KEPT_LANE_BREAKERS} lanes`)
      .default({}),
    failure_reason: z.enum(FAILURE_REASONS).nullable(),
    failure_detail: z.string().max(2000).nullable(),
    /** Phases finished for good: a resume starts after the last of them. */
    completed_phases: z.array(
      z.enum([
        'PLANNING',
        'SPECIFICATION',
        'AWAITING_SPEC_VALIDATION',
        'IMPLEMENTATION',
        'QA',
        'AWAITING_QA_VALIDATION',
        'PR',
      ]),
    ),
    gate_decisions: z.array(gateDecisionSchema).max(100),
    prd_title: z.string(),
    base_branch: branchName.nullable(),
    feature_branch: branchName.nullable(),
    pr_url: z.string().nullable(),
    /** Absent in files written before it existed. */
    pr_outcome: prOutcomeSchema.nullable().default(null),
    pid: z.int().nullable(),
    /** Cap-guarding: reported costs plus `unreported_usd` (see phaseSpendSchema). */
    cost_usd: z.number().min(0),
    /** Held for agent calls that never reported a cost: not spend. Older files: none. */
    unreported_usd: z.number().min(0).default(0),
    unreported_calls: z.int().min(0).default(0),
    /** Answers the human gave to an agent's question, handed to that agent's next run. */
    pending_answer: z.string().max(4000).nullable(),
    /** Tool calls the human allowed at a "needs input" gate (a denied permission), for later runs. */
    allowed_tools: z.array(z.string().max(300)).max(50),
    engine: z.enum(['ticks', 'single', 'cycle']),
    /** `ralphy start --issue`: the GitHub issue that is this workflow's PRD, reported back on at the end. */
    issue: z.int().min(1).nullable().default(null),
    /** The commit the workflow started from (on the base branch): the PR's diff is measured from it. */
    base_commit: z.string().min(7).max(64).nullable(),
    tasks: z.array(taskRecordSchema).max(500),
    /** The last verification runs the runner itself made, with the commit they ran on. */
    verification: z
      .strictObject({ commit: z.string().min(7).max(64), runs: z.array(verificationRunSchema).max(50) })
      .nullable(),
    blast_radius: blastRadiusSchema.nullable(),
    /** A usage-limit wait in progress: the run resumes the same step at this time. */
    waiting_until: z.iso.datetime().nullable(),
    max_cost_usd: z.number().min(0).nullable(),
    /**
     * Per agent phase: what its agent calls cost (counted where cost_usd is, so the two never
     * disagree) and its caps as the config said when the run started or resumed. Older files: empty.
     */
    phases: z.partialRecord(z.enum(BUDGET_PHASES), phaseSpendSchema).default({}),
    /**
     * What the human should run next (the PR could not be opened from here, say). The project's
     * folder is written as PROJECT_ROOT_TOKEN and filled in when shown, so a moved or copied
     * project never points at where it used to be.
     */
    next_steps: z.array(z.string().max(500)).max(10),
  }),
);

/** Stands for the project's folder in a stored next step (`ralphy start {project}`). */
export const PROJECT_ROOT_TOKEN = '{project}';

/** Next steps as the human should read them, for the project where it is now. */
export function nextStepsAt(steps: readonly string[], root: string): string[] {
  return steps.map((step) => step.split(PROJECT_ROOT_TOKEN).join(root));
}

export type WorkflowFile = z.infer<typeof workflowFileSchema>;
export type BreakerSnapshot = z.infer<typeof breakerSnapshotSchema>;
export type GateDecision = z.infer<typeof gateDecisionSchema>;
export type TaskRecord = z.infer<typeof taskRecordSchema>;
export type Selection = z.infer<typeof selectionSchema>;
export type AttemptRecord = z.infer<typeof attemptRecordSchema>;

/** A gate nobody answered: no decision at all (older files recorded it as a reject by nobody). */
export function isUnanswered(g: GateDecision): boolean {
  return g.decision === 'unanswered' || g.by === 'nobody';
}
