import { spendWithHeld, usd } from '../protocol/money.js';
import { BUDGET_PHASES, nextStepsAt, type WorkflowFile } from '../protocol/workflow.js';
import { isProcessAlive } from '../workspace/boot-id.js';

/**
 * The workflow part of `ralphy status` (seed 002 §9): phase, status, tasks x/y, breaker, elapsed,
 * cost, and what to do next. A "running" workflow whose process is gone is shown as interrupted.
 */

export interface WorkflowView {
  readonly title: string;
  readonly state: WorkflowFile['state'];
  readonly status: WorkflowFile['status'];
  readonly alive: boolean;
  readonly tasks: string;
  readonly current_task: string | null;
  readonly breaker: string;
  /** Issue 19: each parallel lane's own breaker, "task-2-1 closed (0/3)". */
  readonly lane_breakers: string[];
  readonly elapsed_s: number;
  /** Cap-guarding: reported costs plus `unreported_usd`. */
  readonly cost_usd: number;
  /** The part of cost_usd held for calls that never reported a cost (not spend), and how many. */
  readonly unreported_usd: number;
  readonly unreported_calls: number;
  /** Every agent call of every phase (the phases' calls summed). */
  readonly calls: number;
  /** A human line: "$0.0200, 10 agent calls, cap $50.00" (held calls said apart). */
  readonly spend: string;
  readonly max_cost_usd: number | null;
  /** Each agent phase that spent or has a cap: "SPECIFICATION $0.1200, 2 of 5 agent calls, cap $1.00". */
  readonly phases: string[];
  readonly reason: string | null;
  readonly detail: string | null;
  readonly waiting_until: string | null;
  readonly branch: string | null;
  readonly pr_url: string | null;
  /** Not opened: the branch pushed without a pull request, or not pushed at all (and why). */
  readonly pr_outcome: { readonly kind: 'pushed' | 'not_pushed'; readonly detail: string } | null;
  readonly next: string[];
  /**
   * Another live process holds the lock while this workflow's own process is gone (a second
   * `ralphy start` at its resume question, or resuming it): "pid 19588 (ralphy start)". The
   * newcomer's pass, defect 28: status said "interrupted" alone next to "Lock: held by running pid".
   */
  readonly taken_up_by: string | null;
}

/** The lock's holder, when a live process holds it. */
export interface LockHolder {
  readonly pid: number;
  readonly command: string;
}

/** `root`: where the project is now, for the next steps that name it. */
export function workflowView(
  w: WorkflowFile,
  now: Date,
  root: string,
  holder: LockHolder | null = null,
): WorkflowView {
  const live = w.status === 'running' || w.status === 'waiting';
  const alive = live && w.pid !== null && isProcessAlive(w.pid);
  const takenUp =
    holder && /\bstart\b/.test(holder.command) && !alive && holder.pid !== w.pid && w.state !== 'COMPLETED'
      ? holder
      : null;
  const cb = w.circuit_breaker;
  const end = live && alive ? now.getTime() : Date.parse(w.updated_at);
  return {
    title: w.prd_title,
    state: w.state,
    status: live && !alive ? 'interrupted' : w.status,
    alive,
    tasks: `${w.tasks_completed}/${w.tasks_total}`,
    current_task: w.current_task,
    breaker: breakerLine(cb),
    lane_breakers: Object.entries(w.lane_breakers).map(([lane, b]) => `${lane} ${breakerLine(b)}`),
    elapsed_s: Math.max(0, Math.round((end - Date.parse(w.started_at)) / 1000)),
    cost_usd: w.cost_usd,
    unreported_usd: w.unreported_usd,
    unreported_calls: w.unreported_calls,
    calls: callsOf(w),
    spend: spendLine(w),
    max_cost_usd: w.max_cost_usd,
    phases: phaseLines(w),
    reason: w.failure_reason,
    detail: w.failure_detail,
    waiting_until: w.waiting_until,
    branch: w.feature_branch,
    pr_url: w.pr_url,
    pr_outcome:
      w.pr_outcome && w.pr_outcome.kind !== 'opened' ? { ...w.pr_outcome, kind: w.pr_outcome.kind } : null,
    next: takenUp
      ? [`answer it in the terminal where ${takenUp.command} runs (pid ${takenUp.pid}), or ralphy abort`]
      : w.next_steps.length > 0 && !(live && alive)
        ? nextStepsAt(w.next_steps, root)
        : [nextStep(w, live, alive)].filter((n): n is string => n !== null),
    taken_up_by: takenUp ? `pid ${takenUp.pid} (${takenUp.command})` : null,
  };
}

function breakerLine(cb: WorkflowFile['circuit_breaker']): string {
  return `${cb.state} (${cb.attempts}/${cb.max_attempts})${cb.last_trigger ? `, last: ${cb.last_trigger}` : ''}`;
}

function callsOf(w: WorkflowFile): number {
  return BUDGET_PHASES.reduce((sum, phase) => sum + (w.phases[phase]?.calls ?? 0), 0);
}

/** The workflow's spend as the app's header says it, with its call count and its cap. */
function spendLine(w: WorkflowFile): string {
  const calls = callsOf(w);
  const amount = spendWithHeld(w.cost_usd, { usd: w.unreported_usd, calls: w.unreported_calls });
  return `${amount}, ${calls} agent call${calls === 1 ? '' : 's'}${w.max_cost_usd !== null ? `, cap ${usd(w.max_cost_usd)}` : ''}`;
}

function phaseLines(w: WorkflowFile): string[] {
  return BUDGET_PHASES.flatMap((phase) => {
    const s = w.phases[phase];
    if (!s || (s.calls === 0 && s.max_cost_usd === null && s.max_calls === null)) return [];
    const amount = spendWithHeld(s.cost_usd, { usd: s.unreported_usd, calls: s.unreported_calls });
    const calls = `${s.calls}${s.max_calls !== null ? ` of ${s.max_calls}` : ''} agent call${s.calls === 1 && s.max_calls === null ? '' : 's'}`;
    return [`${phase} ${amount}, ${calls}${s.max_cost_usd !== null ? `, cap ${usd(s.max_cost_usd)}` : ''}`];
  });
}

function nextStep(w: WorkflowFile, live: boolean, alive: boolean): string | null {
  if (live && alive) return 'ralphy abort stops it';
  if (w.state === 'COMPLETED') return null;
  if (w.state === 'REJECTED') return 'edit PRD.md, then ralphy start for a new workflow';
  return 'ralphy start resumes it (it asks first)';
}
