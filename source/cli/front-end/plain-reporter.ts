import {
  type Clock,
  type EventHandlers,
  type GateRequestedEvent,
  type GateResolvedEvent,
  oneLine,
  type PlannerActionsEvent,
  realClock,
  remediationOfFailure,
  type StampedEvent,
  spendWithHeld,
  stripControls,
  usd,
} from '../../engine/index.js';
import { type CommandIo, println } from '../io.js';

/**
 * The plain front end: timestamped lines per meaningful event (seed 002 §9 style,
 * `[14:30:01] Phase: SPECIFICATION`, a tick's `Step: BUILD`, every line of a multi-line event stamped too), no escape codes, safe
 * for logs and CI. A usage-limit wait counts down on `timer` (injected, so tests move it by hand).
 */
export function plainReporter(io: CommandIo, timer: Clock = realClock): (event: StampedEvent) => void {
  const print = (at: string, text: string) => {
    for (const line of text.split('\n'))
      println(io.stdout, line ? `[${clock(at)}] ${line}` : `[${clock(at)}]`);
  };
  const countdown = limitCountdown(timer, (text) => print(new Date(timer.now()).toISOString(), text));
  // A gate's answer is worded after what was asked (a question to answer, or a yes/no).
  let asked: GateQuestion = 'yes_no';
  return (event) => {
    // Nothing else happens while a limit is waited for: any other event means the wait is over.
    if (event.type !== 'log') countdown.stop();
    if (event.type === 'gate.requested') asked = event.answer;
    const text =
      event.type === 'gate.resolved' ? stripControls(gateResolvedLine(event, asked)) : formatPlain(event);
    // Issue 19: a parallel lane's lines say whose they are.
    if (text !== null)
      print(event.at, event.lane ? prefixLines(`[${stripControls(event.lane)}] `, text) : text);
    if (event.type === 'workflow.waiting') countdown.start(Date.parse(event.until));
  };
}

function prefixLines(prefix: string, text: string): string {
  return text
    .split('\n')
    .map((line) => prefix + line)
    .join('\n');
}

/** A line every whole minute left, and one at 10 s, until the limit resets (issue 4: "a visible countdown"). */
function limitCountdown(timer: Clock, say: (text: string) => void) {
  let stopTimer: (() => void) | null = null;
  const stop = () => {
    stopTimer?.();
    stopTimer = null;
  };
  const start = (until: number) => {
    stop();
    if (Number.isNaN(until)) return;
    let mark = markBelow(until - timer.now());
    stopTimer = timer.every(1000, () => {
      const left = until - timer.now();
      if (left <= 0 || mark === null) return stop();
      if (left > mark) return;
      say(
        `Waiting for the usage limit: ${remaining(left)} left (resets at ${clock(new Date(until).toISOString())})`,
      );
      mark = markBelow(left);
    });
  };
  return { start, stop };
}

/** The next countdown line's time left: the whole minute below `leftMs`, then 10 s, then none. */
function markBelow(leftMs: number): number | null {
  if (leftMs > 60_000) return Math.floor((leftMs - 1) / 60_000) * 60_000;
  return leftMs > 10_000 ? 10_000 : null;
}

function remaining(ms: number): string {
  const total = Math.ceil(ms / 1000);
  const [h, m, s] = [Math.floor(total / 3600), Math.floor((total % 3600) / 60), total % 60];
  const two = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h}h${two(m)}m${two(s)}s` : m > 0 ? `${m}m${two(s)}s` : `${s}s`;
}

/**
 * The plain text of one event (several lines for some), or null for events it does not show.
 * Model text (TASKS.md titles, the PRD title, what an agent said), branch names and child output
 * go to a terminal here: every line leaves without an escape sequence or a control character
 * (a cursor move, a screen clear, an OSC 52 clipboard write, a bell, a carriage return).
 */
export function formatPlain(event: StampedEvent): string | null {
  const format = FORMATS[event.type] as (e: StampedEvent) => string | null;
  const text = format(event);
  return text === null ? null : stripControls(text);
}

/** A field shown inside a line: controls dropped, newlines shown as ⏎, cut to `max`. */
function field(text: string, max: number): string {
  return oneLine(stripControls(text), max);
}

/**
 * Yes/no gates that nobody could answer decide nothing: the workflow waits there for the next
 * `ralphy start` (the port's "no" from nobody is never a human's reject).
 */
const WAITING_GATES = new Set(['spec', 'qa']);

/** Seed 002 §9 names the workflow's agents `spec-agent`, `dev-agent`, `qa-agent`. */
const WORKFLOW_AGENTS = new Set(['spec', 'dev', 'qa']);

type Formats = EventHandlers<string | null>;

const FORMATS: Formats = {
  'run.started': (e) => `relais ${e.command} ${e.run_id} in ${e.project}`,
  'fleet.attached': (e) =>
    `Attached to fleet run ${e.run_id} (${field(e.repo, 300)}); it goes on without this terminal`,
  // The snapshot is for the app's fleet view; plain `fleet status` prints its own lines.
  'fleet.status': () => null,
  'workflow.started': (e) =>
    `Workflow "${field(e.prd_title, 300)}" in ${field(e.project, 300)} (${e.engine} engine${e.feature_branch ? `, branch ${field(e.feature_branch, 200)}` : ''})${e.resumed_from ? `, resuming at ${e.resumed_from}` : ''}`,
  // The resume question's own lines say how the workflow stopped.
  'workflow.resumable': () => null,
  'task.proposed': (e) => `Task ${e.task_id} [${e.milestone_id}] ${e.task_kind}: ${field(e.intent, 200)}`,
  'ledger.updated': () => null,
  // "Phase:" is the workflow's (seed 002 §9); a tick's steps are "Step:", so the two never read alike.
  'phase.changed': (e) => `Step: ${e.phase}`,
  'agent.started': (e) =>
    WORKFLOW_AGENTS.has(e.role)
      ? `Agent: ${e.role}-agent started${e.attempt > 1 ? ` (attempt ${e.attempt})` : ''}`
      : `${e.role} started (model ${e.model}${e.attempt > 1 ? `, attempt ${e.attempt}` : ''})`,
  'agent.output': (e) => `  ${e.role}${e.kind === 'error' ? ' ERROR' : ''}: ${e.text}`,
  'agent.tool': (e) => `  ${e.role} tool ${e.tool}${e.target ? ` ${field(e.target, 160)}` : ''}`,
  'agent.retry': (e) =>
    `  ${e.role}: API retry ${e.attempt}/${e.max_retries} (${e.error}), next in ${Math.round(e.retry_delay_ms / 1000)}s`,
  'agent.finished': (e) =>
    `${e.role} ${e.ok ? 'answered' : 'failed'} in ${seconds(e.duration_ms)}, $${e.cost_usd.toFixed(4)}${e.ok ? '' : `: ${field(e.summary, 600)}`}`,
  'judge.finished': (e) => {
    const violations = e.violations.slice(0, 5).map((v) => `\n    ${field(v, 200)}`);
    return `Judge: ${e.blast_radius_line}${e.code ? ` -> ${e.code}` : scopeOk(e.sandbox)}${violations.join('')}`;
  },
  'verify.started': (e) =>
    `Verify ${e.template_id} (${e.phase}): ${field([e.cmd, ...e.args].join(' '), 200)}`,
  'verify.finished': (e) => `Verify ${e.template_id}: ${e.summary}`,
  'budget.warning': (e) => `Budget warning: ${e.warnings.join('; ')}`,
  log: (e) => `${e.level === 'info' ? '' : `${e.level.toUpperCase()}: `}${field(e.message, 400)}`,
  'loop.tick': (e) => {
    const parts = [`Tick ${e.tick}: ${e.code}`];
    if (e.task_id) parts.push(e.task_id);
    if (e.milestone) parts.push(`[${e.milestone}]`);
    parts.push(`(${e.blast_radius_line}) ${costOf(e)}`);
    if (e.commit) parts.push(`committed ${e.commit.slice(0, 12)}`);
    if (e.control) parts.push(`control ${e.control}`);
    return parts.join(' ');
  },
  'loop.finished': (e) => {
    const counts =
      Object.entries(e.verdicts)
        .map(([code, n]) => `${n} ${code}`)
        .join(', ') || 'none';
    return `Loop finished (${e.mode}): ${e.ticks} tick(s) [${counts}], ${e.calls} agent call(s), ${costOf(e)}; stopped because ${e.reason}`;
  },
  'workflow.changed': (e) =>
    e.state === 'FAILED' || e.state === 'REJECTED'
      ? `State: ${e.state} (reason: ${e.reason ?? 'rejected'})${e.detail ? ` ${field(e.detail, 300)}` : ''}`
      : `Phase: ${e.state}${e.status === 'waiting' ? ' (waiting for a human)' : ''}`,
  // A phase with a cap says where it stands after each call; without one, agent.finished says enough.
  'workflow.spend': (e) =>
    e.max_cost_usd === null && e.max_calls === null
      ? null
      : `Spend: ${e.phase} ${spendWithHeld(e.cost_usd, { usd: e.unreported_usd ?? 0, calls: e.unreported_calls ?? 0 })}, ${e.calls}${e.max_calls !== null ? ` of ${e.max_calls}` : ''} agent call${e.calls === 1 && e.max_calls === null ? '' : 's'}${e.max_cost_usd !== null ? `, cap ${usd(e.max_cost_usd)}` : ''}`,
  'breaker.changed': (e) => (e.log.length > 0 ? e.log.join('\n') : null),
  'gate.requested': (e) =>
    [
      e.gate === 'plan'
        ? `=== ${field(e.title, 300)} ===`
        : `=== VALIDATION REQUIRED: ${field(e.title, 300)} ===`,
      ...e.lines.map((l) => `  ${field(l, 300)}`),
    ].join('\n'),
  // The planner reads nobody's "no" itself (it proceeds under stated assumptions): its line stays.
  'gate.resolved': (e) => gateResolvedLine(e, 'yes_no'),
  'workflow.waiting': (e) =>
    `Waiting for the usage limit to reset at ${new Date(e.until).toLocaleTimeString()} (${e.reason})`,
  'lane.changed': (e) =>
    `Lane ${field(e.lane, 60)} task ${e.task} ${field(e.title, 200)}: ${e.phase}${e.detail ? ` (${field(e.detail, 300)})` : ''}${e.phase === 'kept' ? ` worktree ${field(e.worktree, 300)}` : ''}`,
  'merge.changed': (e) =>
    `Merge queue: ${field(e.lane, 60)} ${e.step.replace('_', ' ')}${e.detail ? ` (${field(e.detail, 300)})` : ''}${e.waiting.length > 0 ? `; waiting: ${e.waiting.map((w) => field(w, 60)).join(', ')}` : ''}`,
  'attempts.decided': (e) =>
    [
      `Best of ${e.candidates.length} for task ${e.task} ${field(e.title, 200)}: ${e.winner ? `${field(e.winner, 60)} lands` : 'no attempt was verified'}`,
      `  Why: ${field(e.reason, 600)}`,
    ].join('\n'),
  'task.updated': (e) =>
    `Task ${e.number} ${field(e.title, 300)}: ${e.status}${e.verified ? ` (${e.verdict === 'verified' ? 'verified' : e.verdict === 'rejected' ? 'not accepted' : 'runner'}: ${field(e.verified, 300)})` : ''}${e.claimed ? ` (agent said: ${field(e.claimed, 120)})` : ''}`,
  'run.finished': (e) =>
    [
      // A pause or Ctrl-C: stopped and resumable, never a bare state that reads like a failure.
      e.status === 'interrupted'
        ? `Workflow stopped at ${e.state} (interrupted, resumable: ralphy start)`
        : `Workflow ${e.state}${e.reason ? ` (reason: ${e.reason})` : ''}${e.pr_url ? ` ${e.pr_url}` : ''}`,
      ...(e.pr_outcome && e.pr_outcome.kind !== 'opened' ? [`  PR: ${field(e.pr_outcome.detail, 500)}`] : []),
      ...(e.reason ? [`  Fix: ${remediationOfFailure(e.reason)}`] : []),
      ...e.next_steps.map((s) => `  Next: ${s}`),
    ].join('\n'),
  'tick.finished': (e) =>
    [
      `Result: ${e.code} (${e.blast_radius_line})${e.commit ? ` committed ${e.commit.slice(0, 12)}` : ''}`,
      ...(e.detail ? [`  Detail: ${field(e.detail, 600)}`] : []),
      ...(e.verdict !== 'success' ? [`  Fix: ${e.remediation}`] : []),
      ...(e.report_path ? [`  Report: ${e.report_path}`] : []),
    ].join('\n'),
  'cycle.started': (e) =>
    `Cycle ${e.iteration + 1} (${e.cycle_id}, nonce ${e.nonce}): phase ${e.phase}${e.sub_step ? `/${e.sub_step}` : ''}, mode ${e.mode}`,
  'cycle.decided': (e) =>
    `Decide: ${e.action} (${e.row === null ? 'no row matched' : `row ${e.row}`}: ${field(e.reason, 200)})`,
  'cycle.verdict': (e) =>
    [
      `Verdict ${e.task_id}: ${e.result} (checks: ${Object.entries(e.checks)
        .map(([name, ok]) => `${name} ${ok ? 'ok' : 'FAIL'}`)
        .join(', ')})`,
      ...e.failures.slice(0, 8).map((f) => `    ${field(f, 200)}`),
      ...e.criteria.map(
        (c) => `    ${c.id} ${c.kind}: ${c.answer}${c.reason ? ` (${field(c.reason, 160)})` : ''}`,
      ),
    ].join('\n'),
  'cycle.notification': (e) =>
    [
      `Notification ${e.event} (${e.action}): ${field(e.title, 200)}${e.path ? ` [${e.path}]` : ''}`,
      ...e.lines.slice(0, 12).map((l) => `  ${field(l, 300)}`),
    ].join('\n'),
  'cycle.finished': (e) =>
    [
      ...(e.details ? [`${e.action ?? 'cycle'}: ${field(e.details, 600)}`] : []),
      ...(e.code && e.reply !== 'CYCLE_OK' ? [`  ${e.code}: ${e.remediation ?? ''}`] : []),
      e.reply,
    ].join('\n'),
  // The questions themselves show at the plan gate; this says what the answer changed.
  'planner.actions': (e) =>
    [
      `Planner: ${plannerSummary(e)}`,
      ...e.gaps_closed.map(
        (g) => `  gap ${g.id} closed (${g.reason})${g.note ? `: ${field(g.note, 200)}` : ''}`,
      ),
      ...e.learnings_added.map((l) => `  learning ${l.id} (${l.type}): ${field(l.content, 200)}`),
    ].join('\n'),
  'planner.ready': (e) =>
    [
      `Planner: ready for the spec (${e.closed_gap_ids.length} decision(s)): ${field(e.context_summary, 300)}`,
      ...(e.assumptions.length > 0 ? ['  Proceeding under these assumptions:'] : []),
      ...e.assumptions.map((a) => `    gap ${a.gap_id} (${field(a.question, 120)}): ${field(a.note, 300)}`),
    ].join('\n'),
};

type GateQuestion = GateRequestedEvent['answer'];

/**
 * Wording rules (issue 16 item 8): a decision is said in words (approved, rejected, answered), with
 * who made it when it was not you ("automatically (--yes)"); nobody's "no" is never a reject; the
 * planner's questions left unanswered are "not answered", not a rejected plan.
 */
export function gateResolvedLine(e: GateResolvedEvent, asked: GateQuestion): string {
  const questions = e.gate === 'plan' && asked === 'text';
  if (e.decision === 'aborted')
    return `Gate ${e.gate}: aborted by ${field(e.answer ?? 'an abort request', 120)}`;
  if (e.by === 'nobody') {
    if (questions)
      return "Gate plan: the planner's questions are not answered (nobody at a terminal; --yes answers yes/no gates only)";
    return `Gate ${e.gate}: nobody could answer${WAITING_GATES.has(e.gate) ? ': the gate waits' : ''}`;
  }
  if (e.decision === 'answer') return `Gate ${e.gate}: answered`;
  if (questions) return "Gate plan: the planner's questions are not answered (skipped)";
  const word =
    e.decision === 'approve' ? 'approved' : e.gate === 'plan' ? 'declined: planning stops here' : 'rejected';
  return `Gate ${e.gate}: ${word}${e.by === 'auto' ? ' automatically (--yes)' : ''}`;
}

function plannerSummary(e: PlannerActionsEvent): string {
  const parts = [
    ...(e.gaps_added.length > 0 ? [`${e.gaps_added.length} question(s) asked (round ${e.round})`] : []),
    ...(e.gaps_closed.length > 0 ? [`${e.gaps_closed.length} gap(s) closed`] : []),
    ...(e.learnings_added.length > 0 ? [`${e.learnings_added.length} learning(s)`] : []),
    ...(e.comments.length > 0 ? [`${e.comments.length} comment(s)`] : []),
  ];
  return `${parts.length > 0 ? parts.join(', ') : 'nothing to do'}; ${e.open_gaps} open`;
}

function clock(iso: string): string {
  const d = new Date(iso);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/**
 * The judge compares the repository's tree: with the sandbox off, a write outside it (a shell
 * `>> ../file`, a write through a symlink leaving the repository) is neither seen nor rolled back.
 */
function scopeOk(sandbox: string | null | undefined): string {
  return sandbox === 'off'
    ? ', scope ok inside the repository (sandbox off: writes outside it are not seen)'
    : ', scope ok';
}

/** A tick's or a loop's cost, with the part held for calls killed before they reported one said apart. */
function costOf(e: { cost_usd: number; held_usd?: number; held_calls?: number }): string {
  const held = { usd: e.held_usd ?? 0, calls: e.held_calls ?? 0 };
  return held.calls > 0 ? spendWithHeld(e.cost_usd, held) : `$${e.cost_usd.toFixed(4)}`;
}
