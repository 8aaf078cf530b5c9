import { remediationOf } from '../protocol/codes.js';

/**
 * Why a cycle failed or waits for a human, each with the one line that says what to do next
 * (shown by the reporter, the notification files and `relais status`).
 */
const CYCLE_CODES = {
  CYCLE_STATE_INVALID:
    'relais/cycle/STATE.json does not validate (see detail); the cycle waits for you. Fix the named field or restore the file from a backup (relais/ is not in git), then run `relais cycle`. It is never reset silently.',
  CYCLE_LOCK_HELD: 'Another `relais cycle` holds relais/cycle/lock.json; wait for it to finish.',
  CYCLE_ALREADY_RUNNING:
    'The previous cycle never finished (the process died); it is now marked timed_out. Run `relais cycle` again.',
  CYCLE_ID_REUSED:
    'Every cycle needs a new cycle id (its nonce must never be reused, seed 003 safety rule 7); pass a fresh id, or none for a random one.',
  CYCLE_NEEDS_HUMAN:
    'The cycle is paused for a human (see the reason); fix it, then run `relais cycle --resume`.',
  CYCLE_BUDGET_EXCEEDED:
    'The time budget (cycle.escalation.max_hours) is used up; raise it in relais.config.json, then run `relais cycle --resume`.',
  CYCLE_STATE_INCONSISTENT:
    'STATE.json validates but its fields contradict each other (see detail); correct them, then run `relais cycle --resume`.',
  CYCLE_SEED_DOCS_MISSING:
    'Run `relais cycle init` (it maps the codebase, then brainstorms VISION.md, PROJECT.md, REQUIREMENTS.md and ROADMAP.md with you and writes them with P2_DONE once you confirm), then `relais cycle`.',
  CYCLE_PHASE_BLOCKED:
    'The planner reported the roadmap phase blocked (see reasons); resolve them, then run `relais cycle --resume`.',
  CYCLE_PLANNER_OUTPUT_INVALID:
    'The planner answered twice without a valid sentinel block for this cycle; the next cycle asks again with a new nonce. Check the planner model if it keeps failing.',
  CYCLE_PHASE_INCOMPLETE:
    'The planner said the roadmap phase is complete but it is not (see detail); the next pick_track is told why. If it keeps saying so, check ROADMAP.md and the planner model.',
  CYCLE_VERIFIER_OUTPUT_INVALID:
    'A verifier answered twice without a valid VERDICT block; judge the task\'s LLM: criteria yourself and record it with `relais cycle --resume --verdict yes|no --reason "..."` (a plain `--resume` asks the verifier again).',
  CYCLE_AGENT_FAILED:
    'An agent CLI failed (see detail: not installed, timed out, API error); fix the cause, the next cycle retries.',
  CYCLE_IMPLEMENT_FAILED:
    'The implementer exited with an error or made no commit; the next cycle retries with the failure as context.',
  CYCLE_DIRTY_TREE:
    'The worktree has uncommitted changes before implementation; commit or stash them (git status), then run `relais cycle --resume`.',
  CYCLE_PROTECTED_CHANGED:
    'The implementer changed runner-owned files (relais/, relais.config.json), git control files or refs (branches, tags), or left files git cannot judge (hard links, FIFOs, sockets); they were restored or removed, its work was kept aside (git stash) and the attempt failed. The next cycle retries with that as context.',
  CYCLE_GIT_OBJECT_CORRUPTED:
    'An object that existed before was changed, replaced or removed in .git/objects while the implementer or the checks ran; nothing more was committed and the cycle waits for you. Run `git fsck --full`, restore the damaged objects from a clone or backup, then run `relais cycle --resume`.',
  CYCLE_VERIFY_FAILED:
    'Verification failed (see failures); the next cycle retries the task with them as context.',
  CYCLE_VERIFY_UNCONFIGURED:
    "Stage 1 could not run the project's tests or lint as configured (see detail): list the verification template ids that run the tests in cycle.verify.tests (the lint ones in cycle.verify.lint) of relais.config.json, or add parameter-free templates under verification.templates; then run `relais cycle --resume`.",
  CYCLE_VERIFY_NEEDS_HUMAN:
    'A verifier asked for a human judgement; decide the task\'s LLM: criteria and record it with `relais cycle --resume --verdict yes|no --reason "..."` (a plain `--resume` asks the verifier again).',
  CYCLE_REPLAN_REQUIRED:
    "A file the task must modify or delete is missing at HEAD, or the track's plan file is missing or invalid (see reason). Run `relais cycle --resume`: the track goes back to create_plan and the planner plans its remaining tasks again, told this reason (verified tasks stay done). A track without a spec (its tasks given by `ralphy start`) resumes the same task instead: restore the file first.",
  CYCLE_REQUEST_SPLIT:
    'The task needs more than 3x its ESTIMATED_DIFF (see reason). Run `relais cycle --resume`: the track goes back to create_plan and the planner plans its remaining tasks again in smaller ones, told this reason (verified tasks stay done). A track without a spec (its tasks given by `ralphy start`) resumes the same task instead.',
  CYCLE_NEEDS_INPUT:
    'The implementer asked a question instead of implementing (see reason) and nobody could answer it; no attempt was counted and its leftovers are in git stash. Answer with `relais cycle --resume --answer "..."`: the next attempt gets your answer.',
  CYCLE_PLAN_REPEATED:
    "The re-plan after stuck cycles gave the task the very plan that already failed (same files, same guidance: the task fingerprint in the reason), so it was not tried a second time. Adjust the task (its files in the track's plan.json, or the code it builds on), then run `relais cycle --resume`.",
  CYCLE_STUCK:
    'No progress after a re-plan (same commit, same test count); look at the task and its failures, then run `relais cycle --resume`.',
  CYCLE_ROLLED_BACK:
    'The task failed max_retries times; its work is kept on the rescue branch and the branch was reset to the last good commit. Look at its failures (commit a fix of your own if that helps), then run `relais cycle --resume`: the task starts again from a fresh packet.',
  CYCLE_GATE_DECLINED: 'A human declined the approval; adjust the plan, then run `relais cycle --resume`.',
  CYCLE_NO_DECIDE_ROW:
    'No row of the decide table matches this state; correct phase / task.sub_step in STATE.json, then run `relais cycle --resume`.',
  CYCLE_INTERNAL: 'The cycle hit an unexpected error (see detail); report it, then run again.',
  // The tick's code and remediation (issue 14): no agent or check starts without the sandbox.
  BLOCKED_SANDBOX_UNAVAILABLE: remediationOf('BLOCKED_SANDBOX_UNAVAILABLE'),
} as const;

export type CycleCode = keyof typeof CYCLE_CODES;

export function cycleRemediation(code: CycleCode): string {
  return CYCLE_CODES[code];
}

export const ALL_CYCLE_CODES = Object.keys(CYCLE_CODES) as CycleCode[];
