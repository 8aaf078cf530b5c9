import type { AgentRole, EventType, StampedEvent, StampedEventOf } from '../../engine/events.js';
import { usd } from '../format/money.js';
import { displayLines, flatten } from '../format/text.js';
import { duration } from '../format/time.js';
import { gateOutcome } from '../format/wording.js';

/**
 * The agent output panel's lines: what the agent printed, its tool calls (one readable line
 * each), API retries, and the milestones of the run (agent started/finished, phase, verdicts), so
 * the panel reads as the run's log. Pure: one event in, zero or more lines out.
 */

export type OutputLineKind = 'text' | 'error' | 'tool' | 'retry' | 'agent' | 'info' | 'warn';

export interface OutputLine {
  readonly kind: OutputLineKind;
  readonly role: AgentRole | null;
  /** A short bold prefix (the tool name of a tool call). */
  readonly label: string | null;
  readonly text: string;
  /** The parallel lane whose event it is (issue 19); absent for the workflow's own lines. */
  readonly lane?: string;
}

function line(
  kind: OutputLineKind,
  text: string,
  role: AgentRole | null = null,
  label: string | null = null,
) {
  return { kind, role, label, text: flatten(text) };
}

function block(kind: OutputLineKind, text: string, role: AgentRole | null = null): OutputLine[] {
  const lines = displayLines(text);
  // "done\n" is one line, not a line and an empty one.
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines.map((text) => ({ kind, role, label: null, text }));
}

export function outputLinesOf(event: StampedEvent): OutputLine[] {
  const format = FORMATS[event.type] as ((event: StampedEvent) => OutputLine[]) | undefined;
  const lines = format ? format(event) : [];
  const lane = event.lane;
  return lane ? lines.map((l) => ({ ...l, lane: flatten(lane, 60) })) : lines;
}

type Formats = {
  [K in EventType]?: (event: StampedEventOf<K>) => OutputLine[];
};

const ok = (exitCode: number, timedOut: boolean) => exitCode === 0 && !timedOut;

const FORMATS: Formats = {
  'agent.output': (e) => block(e.kind === 'error' ? 'error' : 'text', e.text, e.role),
  'agent.tool': (e) => [{ kind: 'tool', role: e.role, label: flatten(e.tool, 60), text: flatten(e.target) }],
  'agent.retry': (e) => [
    line(
      'retry',
      `API retry ${e.attempt}/${e.max_retries} (${e.error}), next in ${duration(e.retry_delay_ms)}`,
      e.role,
    ),
  ],
  'agent.started': (e) => [
    line(
      'agent',
      `── ${e.role} started · model ${e.model}${e.attempt > 1 ? ` · attempt ${e.attempt}` : ''}`,
      e.role,
    ),
  ],
  'agent.finished': (e) => [
    line(
      e.ok ? 'agent' : 'error',
      `── ${e.role} ${e.ok ? 'finished' : 'failed'} in ${duration(e.duration_ms)} · ${usd(e.cost_usd)}${e.ok || !e.summary ? '' : `: ${e.summary}`}`,
      e.role,
    ),
  ],
  log: (e) => block(e.level, e.message),
  'budget.warning': (e) => e.warnings.map((w) => line('warn', `budget: ${w}`)),
  'breaker.changed': (e) => e.log.map((l) => line(e.trigger ? 'warn' : 'info', l)),
  'workflow.changed': (e) => [
    line(
      e.state === 'FAILED' || e.state === 'REJECTED' ? 'error' : 'info',
      `▶ ${e.state}${e.reason ? ` (${e.reason})` : ''}${e.detail ? `: ${e.detail}` : ''}`,
    ),
  ],
  'workflow.waiting': (e) => [line('warn', `usage limit: waiting until ${e.until} (${e.reason})`)],
  // The words that came with the decision: a typed answer, or why a human rejected.
  'gate.resolved': (e) => [
    e.decision === 'aborted'
      ? line('warn', gateOutcome(e.gate, e.decision, e.by, undefined, e.answer))
      : line(
          e.by === 'nobody' ? 'warn' : 'info',
          `${gateOutcome(e.gate, e.decision, e.by)}${e.answer && e.by === 'human' ? `: ${e.answer}` : ''}`,
        ),
  ],
  'attempts.decided': (e) => [
    line(
      e.winner ? 'info' : 'error',
      `best of ${e.candidates.length} for task ${e.task}: ${e.winner ? `${e.winner} lands` : 'no attempt was verified'} · ${e.reason}`,
    ),
  ],
  'task.proposed': (e) => [line('info', `task ${e.task_id} [${e.milestone_id}] ${e.task_kind}: ${e.intent}`)],
  'judge.finished': (e) => [
    line(
      e.code ? 'error' : 'info',
      // Sandbox off: the judge sees the repository's tree only, never a write outside it.
      `judge: ${e.blast_radius_line}${e.code ? ` → ${e.code}` : e.sandbox === 'off' ? ', scope ok inside the repository (sandbox off: writes outside it are not seen)' : ', scope ok'}`,
    ),
  ],
  'verify.started': (e) => [
    line('info', `verify ${e.template_id} (${e.phase}): ${[e.cmd, ...e.args].join(' ')}`),
  ],
  'verify.finished': (e) => [
    line(ok(e.exit_code, e.timed_out) ? 'info' : 'error', `verify ${e.template_id}: ${e.summary}`),
  ],
  'tick.finished': (e) => [
    line(e.verdict === 'success' ? 'info' : 'warn', `tick result: ${e.code} (${e.blast_radius_line})`),
  ],
  'cycle.started': (e) => [
    line(
      'info',
      `cycle ${e.iteration + 1} (${e.cycle_id}): ${e.phase}${e.sub_step ? `/${e.sub_step}` : ''}, ${e.mode}`,
    ),
  ],
  'cycle.decided': (e) => [
    line('info', `decide: ${e.action} (${e.row === null ? 'no row matched' : `row ${e.row}`}: ${e.reason})`),
  ],
  'cycle.verdict': (e) => [
    line(e.failures.length > 0 ? 'warn' : 'info', `verdict ${e.task_id}: ${e.result}`),
    ...e.failures.slice(0, 8).map((f) => line('error', `  ${f}`)),
  ],
  'cycle.notification': (e) => [line('warn', `notification ${e.event}: ${e.title}`)],
  // The code and its remediation, as the plain reporter prints them: what to do next.
  'cycle.finished': (e) => [
    line(e.reply === 'CYCLE_FAIL' ? 'error' : 'info', `${e.reply}${e.details ? `: ${e.details}` : ''}`),
    ...(e.code && e.reply !== 'CYCLE_OK'
      ? [line('warn', `${e.code}${e.remediation ? ` · Fix: ${e.remediation}` : ''}`)]
      : []),
  ],
  // The questions show in the gate panel; the log says what each planner answer changed.
  'planner.actions': (e) => [
    line(
      'info',
      `planner: ${e.gaps_added.length} question(s) asked, ${e.gaps_closed.length} gap(s) closed, ${e.open_gaps} open`,
      'planner',
    ),
    ...e.gaps_closed.map((g) =>
      line('info', `  gap ${g.id} ${g.reason}${g.note ? `: ${g.note}` : ''}`, 'planner'),
    ),
    ...e.learnings_added.map((l) => line('info', `  learning ${l.id}: ${l.content}`, 'planner')),
  ],
  'planner.ready': (e) => [
    line('agent', `planner: ready for the spec · ${e.context_summary}`, 'planner'),
    ...e.assumptions.map((a) => line('warn', `  assumption (gap ${a.gap_id}): ${a.note}`, 'planner')),
  ],
};
