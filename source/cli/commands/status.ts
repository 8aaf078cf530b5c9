import { resolve } from 'node:path';
import {
  type FailureReason,
  projectStatus,
  remediationOfFailure,
  type StatusView,
  type WorkflowView,
} from '../../engine/index.js';
import { EXIT } from '../exit-codes.js';
import { type CommandIo, println } from '../io.js';

/**
 * `relais status [--preflight] [--json]` (also `ralphy status`): what the engine reads of the
 * workspace, printed. With --preflight, exits 3 with the code when a run would be blocked.
 */
export async function statusCommand(
  io: CommandIo,
  projectArg: string | undefined,
  flags: { preflight: boolean; json: boolean },
): Promise<number> {
  // main.ts has settled the folder: it exists, and inside a repository it is the repository's root.
  const root = resolve(io.cwd, projectArg ?? '.');
  const result = await projectStatus(root, io.env, { preflight: flags.preflight });
  if (result.kind === 'blocked') {
    const { code, detail, remediation } = result.preflight;
    if (flags.json) println(io.stdout, JSON.stringify({ root, preflight: result.preflight }));
    else println(io.stdout, `${code}: ${detail}\n  Fix: ${remediation}`);
    return EXIT.BLOCKED;
  }
  const { status } = result;
  if (flags.json) println(io.stdout, JSON.stringify(status));
  else printStatus(io, status);
  // No config that loads: every run is blocked, as with none at all.
  const blocked = status.config_problem !== null || (status.preflight !== null && !status.preflight.ok);
  return blocked ? EXIT.BLOCKED : EXIT.SUCCESS;
}

function printStatus(io: CommandIo, s: StatusView): void {
  println(io.stdout, `Project:   ${s.root}`);
  if (s.config_problem)
    println(
      io.stdout,
      `Config:    invalid: ${s.config_problem}\n  Fix: correct the named field (git diff relais.config.json shows what changed); runs are blocked until it loads`,
    );
  if (s.workflow) for (const line of workflowLines(s.workflow)) println(io.stdout, line);
  for (const line of s.cycle) println(io.stdout, line);
  if (s.workflow_problem)
    println(
      io.stdout,
      `Workflow:  relais/WORKFLOW.json is unreadable (${s.workflow_problem}); it is kept as it is`,
    );
  println(io.stdout, `Milestone: ${s.milestone ?? '(none yet)'}`);
  println(io.stdout, `Ledger:    ${s.budget_summary ?? `unreadable (${s.ledger_problem})`}`);
  for (const w of s.budget_warnings) println(io.stdout, `Warning:   ${w}`);
  if (s.totals)
    println(
      io.stdout,
      `All time:  ${s.totals.ticks} ticks, ${s.totals.orchestrator_calls + s.totals.builder_calls} agent calls, $${s.totals.estimated_cost_usd.toFixed(2)}`,
    );
  for (const line of s.recovery) println(io.stdout, `Recovery:  ${line}`);
  println(io.stdout, `Lock:      ${s.lock.held ? `held, ${s.lock.detail}` : 'free'}`);
  const last = s.last_report;
  println(io.stdout, `Last run:  ${last ? `${last.run_id} ${last.code} (${last.blast_radius})` : '(none)'}`);
  if (s.preflight) {
    const p = s.preflight;
    println(
      io.stdout,
      p.ok ? 'Preflight: OK, a tick may start' : `Preflight: ${p.code}: ${p.detail}\n  Fix: ${p.remediation}`,
    );
  }
}

/** The workflow lines of seed 002 §9: phase, tasks x/y, breaker, elapsed, cost, what to do next. */
function workflowLines(v: WorkflowView): string[] {
  const money = `$${v.cost_usd.toFixed(2)}${v.max_cost_usd !== null ? ` of $${v.max_cost_usd.toFixed(2)}` : ''}`;
  return [
    `Workflow:  "${v.title}" ${v.state} (${v.status}${v.taken_up_by ? `; ${v.taken_up_by} holds the lock: it asks whether to resume, or resumes it` : ''})${v.branch ? ` on ${v.branch}` : ''}`,
    `Tasks:     ${v.tasks}${v.current_task ? `, now: ${v.current_task}` : ''}`,
    `Breaker:   ${v.breaker}`,
    ...v.lane_breakers.map((line) => `Lane:      breaker of ${line}`),
    `Elapsed:   ${formatDuration(v.elapsed_s)}, cost ${money}`,
    ...v.phases.map((line) => `Spend:     ${line}`),
    ...(v.waiting_until ? [`Waiting:   for a usage limit to reset at ${v.waiting_until}`] : []),
    ...(v.reason ? [`Reason:    ${v.reason}${v.detail ? `: ${v.detail}` : ''}`] : []),
    ...(!v.reason && v.detail ? [`Paused:    ${v.detail}`] : []),
    ...(v.reason ? [`Fix:       ${remediationOfFailure(v.reason as FailureReason)}`] : []),
    ...(v.pr_url ? [`PR:        ${v.pr_url}`] : []),
    ...v.next.map((n) => `Next:      ${n}`),
  ];
}

function formatDuration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return h > 0
    ? `${h}h${String(m).padStart(2, '0')}m`
    : m > 0
      ? `${m}m${String(s).padStart(2, '0')}s`
      : `${s}s`;
}
