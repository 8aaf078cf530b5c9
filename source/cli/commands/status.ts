import { resolve } from 'node:path';
import {
  type FailureReason,
  projectStatus,
  remediationOfFailure,
  type StatusView,
  spendWithHeld,
  usd,
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

/** Status lines are at most this wide: a longer one goes on under its label, cut between words. */
const WIDTH = 100;
const INDENT = ' '.repeat(11);

function wrapped(line: string): string[] {
  if (line.length <= WIDTH) return [line];
  const out: string[] = [];
  let current = '';
  for (const word of line.split(' ')) {
    const next = current === '' ? word : `${current} ${word}`;
    if (next.length > WIDTH && current.trim() !== '') {
      out.push(current);
      current = `${INDENT}${word}`;
    } else current = next;
  }
  out.push(current);
  return out;
}

function printStatus(io: CommandIo, s: StatusView): void {
  println(io.stdout, `Project:   ${s.root}`);
  if (s.config_problem)
    println(
      io.stdout,
      `Config:    invalid: ${s.config_problem}\n  Fix: correct the named field (git diff relais.config.json shows what changed); runs are blocked until it loads`,
    );
  if (s.workflow) for (const line of workflowLines(s.workflow).flatMap(wrapped)) println(io.stdout, line);
  for (const line of s.cycle) println(io.stdout, line);
  if (s.workflow_problem)
    println(
      io.stdout,
      `Workflow:  relais/WORKFLOW.json is unreadable (${s.workflow_problem}); it is kept as it is`,
    );
  println(io.stdout, `Milestone: ${s.milestone ?? '(none yet)'}`);
  for (const line of ledgerLines(s)) println(io.stdout, line);
  for (const w of s.budget_warnings) println(io.stdout, `Warning:   ${w}`);
  for (const line of s.recovery) println(io.stdout, `Recovery:  ${line}`);
  println(io.stdout, `Lock:      ${lockLine(s.lock)}`);
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

/**
 * The tick ledger (STATE.json): the milestone's counters against their own caps, then every
 * milestone together. Under a workflow its cost is only the ticks' part of the workflow's spend
 * (planning, specification and QA calls are the rest), so it is labelled as such. One item per
 * line, in words, so nothing wraps mid-word in a 100-column terminal.
 */
function ledgerLines(s: StatusView): string[] {
  const b = s.ledger;
  if (!b) return [`Ledger:    unreadable (${s.ledger_problem})`];
  const c = s.caps;
  const ticksOnly = s.workflow ? ' (ticks only, part of the workflow spend above)' : '';
  // Without a config that loads there are no caps to count against: the counters alone.
  const of = (used: number, cap: number | undefined) => (cap === undefined ? `${used}` : `${used}/${cap}`);
  const lines = [
    `Ledger:    this milestone${ticksOnly}:`,
    `           ${of(b.ticks, c?.max_ticks)} ticks, ${of(b.orchestrator_calls, c?.max_orchestrator_calls)} orchestrator calls, ${of(b.builder_calls, c?.max_builder_calls)} builder calls, ${of(b.verify_runs, c?.max_verify_runs)} verify runs`,
    `           ${heldOf(b)}${c ? `, milestone cap ${usd(c.max_estimated_cost_usd)}` : ' (no caps: the config does not load)'}`,
  ];
  const t = s.totals;
  if (t) {
    const calls = t.orchestrator_calls + t.builder_calls;
    lines.push(`All time:  ${t.ticks} ticks, ${calls} orchestrator and builder calls, ${heldOf(t)}`);
  }
  return lines.flatMap(wrapped);
}

function heldOf(l: NonNullable<StatusView['ledger']>): string {
  return spendWithHeld(l.estimated_cost_usd, { usd: l.unreported_usd, calls: l.unreported_calls });
}

function lockLine(lock: StatusView['lock']): string {
  if (!lock.held) return 'free';
  // The lock's own reason already starts with "held by ..." (no "held, held by").
  return lock.detail?.startsWith('held') ? lock.detail : `held${lock.detail ? `, ${lock.detail}` : ''}`;
}

/** The workflow lines of seed 002 §9: phase, tasks x/y, breaker, elapsed, cost, what to do next. */
function workflowLines(v: WorkflowView): string[] {
  // "COMPLETED (completed)" said one thing twice: the status shows only when it adds something.
  const said = [
    v.status.toUpperCase() === v.state ? null : v.status,
    v.taken_up_by ? `${v.taken_up_by} holds the lock: it asks whether to resume, or resumes it` : null,
  ].filter((part) => part !== null);
  const status = said.length > 0 ? ` (${said.join('; ')})` : '';
  return [
    `Workflow:  "${v.title}" ${v.state}${status}${v.branch ? ` on ${v.branch}` : ''}`,
    `Tasks:     ${v.tasks}${v.current_task ? `, now: ${v.current_task}` : ''}`,
    `Breaker:   ${v.breaker}`,
    ...v.lane_breakers.map((line) => `Lane:      breaker of ${line}`),
    `Elapsed:   ${formatDuration(v.elapsed_s)}`,
    `Total:     ${v.spend}`,
    ...v.phases.map((line) => `Spend:     ${line}`),
    ...(v.waiting_until ? [`Waiting:   for a usage limit to reset at ${v.waiting_until}`] : []),
    ...(v.reason ? [`Reason:    ${v.reason}${v.detail ? `: ${v.detail}` : ''}`] : []),
    // A rejected specification ended the workflow for good: that is no pause.
    ...(!v.reason && v.detail ? [`${v.state === 'REJECTED' ? 'Rejected:' : 'Paused:  '}  ${v.detail}`] : []),
    ...(v.reason ? [`Fix:       ${remediationOfFailure(v.reason as FailureReason)}`] : []),
    ...(v.pr_url ? [`PR:        ${v.pr_url}`] : []),
    // COMPLETED with nothing opened: the branch is ready, not a pull request (never read as one).
    ...(v.pr_outcome ? [`PR:        ${v.pr_outcome.detail}`] : []),
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
