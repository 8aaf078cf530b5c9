import { recordSpecGate } from '../planner/prd-session.js';
import { announceBranchBlast, measureBranchBlast } from './branch-blast.js';
import type { PhaseResult, WorkflowContext } from './context.js';
import { askGate, QA_FILE, SPEC_FILE, stopped, TASKS_FILE } from './phase-helpers.js';
import { qaSummary } from './qa-phase.js';

/**
 * The two human gates of seed 002 §4: wait without limit (the breaker has nothing running to
 * watch), show what is being approved, and record the decision. An abort or interrupt while
 * waiting ends the wait; it is never read as a "no", and neither is nobody answering: then no
 * §8 transition happens and the next `ralphy start` asks again.
 */

export async function specGate(ctx: WorkflowContext): Promise<PhaseResult> {
  const tasks = ctx.workflow.tasks;
  const lines = [
    'Files generated:',
    `  - ${SPEC_FILE}`,
    `  - ${TASKS_FILE} (${tasks.length} task${tasks.length === 1 ? '' : 's'})`,
    ...tasks.slice(0, 40).map((t) => `    ${t.number}. ${t.title}`),
    ...(tasks.length > 40 ? [`    … and ${tasks.length - 40} more`] : []),
  ];
  const reply = await askGate(ctx, 'spec', 'Approve the specification and tasks?', lines, 'yes_no');
  if (ctx.options.signal.aborted) return stopped(ctx);
  // Seed 004's primary metric: did the spec built on the planning pass the first gate?
  // Only a human's verdict counts (not --yes, not nobody at the terminal).
  if (reply.by === 'human') await recordSpecGate(ctx.setup.paths, ctx.prd, reply.decision === 'approve');
  if (reply.by === 'nobody') return unanswered('the specification');
  return { kind: 'next', event: reply.decision === 'approve' ? 'approve' : 'reject' };
}

export async function qaGate(ctx: WorkflowContext): Promise<PhaseResult> {
  const summary = await qaSummary(ctx);
  // Only the runner's verdict counts a task as done (issue 16 item 1).
  const done = ctx.workflow.tasks.filter((t) => t.verdict === 'verified').length;
  // The human approves the pull request: the Blast radius panel shows the whole branch.
  const branch = await measureBranchBlast(ctx);
  announceBranchBlast(ctx, branch);
  const lines = [
    `QA report: ${QA_FILE}`,
    ...(summary.length > 0 ? summary.map((l) => `  ${l}`) : ['  (the report has no summary section)']),
    `Tasks verified by the runner: ${done}/${ctx.workflow.tasks.length}`,
    `The branch: ${branch.files.length} file(s), +${branch.blast.lines_added}/-${branch.blast.lines_deleted}`,
    'Approving opens the pull request.',
  ];
  const reply = await askGate(ctx, 'qa', 'Approve the QA report and open the pull request?', lines, 'yes_no');
  if (ctx.options.signal.aborted) return stopped(ctx);
  if (reply.by === 'nobody') return unanswered('the QA report');
  return { kind: 'next', event: reply.decision === 'approve' ? 'approve' : 'reject' };
}

/** Nobody can approve or reject (no terminal, no --yes): "denied", and the gate stays for a human. */
function unanswered(what: string): PhaseResult {
  return {
    kind: 'unanswered',
    detail: `nobody could approve ${what} (no terminal and no --yes); the gate waits for a human`,
  };
}
