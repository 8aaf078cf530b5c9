import type { GateKind } from '../events.js';
import type { GateDocument } from '../gates.js';
import type { GateDecision } from '../protocol/workflow.js';
import type { CircuitBreaker } from '../supervise/circuit-breaker.js';
import { readRepoFile } from '../workspace/safe-read.js';
import type { StepOutcome } from './agent-step.js';
import type { PhaseResult, WorkflowContext } from './context.js';
import type { JudgedRun } from './judged-run.js';
import { parseTasks, type TasksParse } from './tasks-file.js';

/** Where the workflow's documents for humans live (docs/ARCHITECTURE.md: ordinary tracked files). */
export const SPEC_FILE = 'specs/SPEC.md';
export const TASKS_FILE = 'specs/TASKS.md';
export const QA_FILE = 'specs/QA_REPORT.md';

export interface PhaseSignal {
  readonly signal: AbortSignal;
  timedOut(): boolean;
  dispose(): void;
  /** Stops the timeout clock (a gate, a usage-limit wait); nested pauses need as many resumes. */
  pause(): void;
  resume(): void;
}

/**
 * The workflow's signal plus the phase timeout of seed 002 §6, on the injected clock. The time a
 * human takes at a gate, or a usage limit takes to reset, is not the phase's: it is paused then.
 */
export function phaseSignal(ctx: WorkflowContext, seconds: number): PhaseSignal {
  const timer = new AbortController();
  const disposed = new AbortController();
  const clock = ctx.options.clock;
  let remaining = seconds * 1000;
  let armedAt = 0;
  let sleeping: AbortController | null = null;
  let pauses = 0;
  const arm = () => {
    const current = new AbortController();
    sleeping = current;
    armedAt = clock.now();
    const stop = AbortSignal.any([current.signal, disposed.signal, ctx.options.signal]);
    void clock.sleep(remaining, stop).then(() => {
      if (!stop.aborted) timer.abort();
    });
  };
  arm();
  const phase: PhaseSignal = {
    signal: AbortSignal.any([ctx.options.signal, timer.signal]),
    timedOut: () => timer.signal.aborted,
    dispose: () => {
      disposed.abort();
      if (ctx.activePhase === phase) ctx.activePhase = null;
    },
    pause: () => {
      if (pauses++ > 0 || sleeping === null) return;
      remaining = Math.max(0, remaining - (clock.now() - armedAt));
      sleeping.abort();
      sleeping = null;
    },
    resume: () => {
      if (pauses === 0 || --pauses > 0) return;
      if (!timer.signal.aborted && !disposed.signal.aborted) arm();
    },
  };
  ctx.activePhase = phase;
  return phase;
}

/** How a step that did not finish ends the phase (timeout, abort, interrupt, breaker, retries). */
export function unfinished(
  ctx: WorkflowContext,
  step: StepOutcome,
  phase: PhaseSignal,
  role: string,
): PhaseResult {
  if (step.kind === 'breaker_open')
    return { kind: 'fail', reason: 'circuit_breaker_triggered', detail: step.detail };
  if (phase.timedOut()) return timeoutFailure(ctx);
  if (step.kind === 'aborted') return stopped(ctx);
  if (step.kind === 'failed')
    return { kind: 'fail', reason: 'agent_failed', detail: `${role}-agent: ${step.detail}` };
  return { kind: 'fail', reason: 'agent_failed', detail: `${role}-agent did not finish` };
}

export function timeoutFailure(ctx: WorkflowContext): PhaseResult {
  const state = ctx.workflow.state;
  const key = state === 'SPECIFICATION' ? 'specification' : state.toLowerCase();
  const seconds = (ctx.setup.config.workflow.timeouts as Record<string, number>)[key];
  return {
    kind: 'fail',
    reason: 'phase_timeout',
    detail: `the ${state} phase ran past its timeout (workflow.timeouts.${key}: ${seconds}s)`,
  };
}

/** Ctrl-C (the workflow stays resumable) or `ralphy abort` (FAILED, reason aborted). */
export function stopped(ctx: WorkflowContext): PhaseResult {
  return ctx.options.abortRequested?.()
    ? {
        kind: 'fail',
        reason: 'aborted',
        detail: `aborted by ${ctx.options.abortedBy?.() ?? 'an abort request'}`,
      }
    : { kind: 'stopped' };
}

/** Stops that are about the repository's integrity, not the scope of the change (issue 14). */
const INTEGRITY_CODES = [
  'STOP_GIT_OBJECT_CORRUPTED',
  'STOP_TREE_CHANGED_DURING_VERIFY',
  'STOP_ROLLBACK_FAILED',
];

export function judgedFailure(run: JudgedRun, role: string): PhaseResult | null {
  if (run.violations.length === 0) return null;
  const integrity = run.violations.some((v) => INTEGRITY_CODES.some((code) => v.startsWith(`${code}:`)));
  return {
    kind: 'fail',
    reason: integrity ? 'integrity_violation' : 'scope_violation',
    detail: `${role}-agent changed what it may not (rolled back): ${run.violations.slice(0, 5).join('; ')}`,
  };
}

export interface GateReply {
  readonly decision: 'approve' | 'reject' | 'answer';
  readonly text: string | null;
  readonly by: 'human' | 'auto' | 'nobody';
  /** Why a human rejected a yes/no gate, if they said. */
  readonly reason: string | null;
}

/** The longest rejection reason kept (WORKFLOW.json keeps every gate decision). */
export const MAX_REASON_CHARS = 2000;

/**
 * Asks a yes/no or text gate. The circuit breaker is paused meanwhile (seed 002 §6.1, special
 * case 1) and the wait has no limit; the decision is recorded in WORKFLOW.json. `lane`: the
 * parallel lane that asks (issue 19); its gate events carry the lane, and so does the request.
 */
/**
 * An abort confirmed while the gate waited (the `a` key, ralphy abort): the human ended the
 * workflow, so the record says who aborted, never "nobody could answer".
 */
async function abortedAtGate(
  ctx: WorkflowContext,
  gate: GateKind,
  breaker: CircuitBreaker | null,
): Promise<GateReply> {
  const by = ctx.options.abortedBy?.() ?? 'an abort request';
  ctx.bus.emit({ type: 'gate.resolved', gate, decision: 'aborted', by: 'human', answer: by });
  await ctx.closeWait({
    gate_decisions: [
      ...ctx.workflow.gate_decisions,
      {
        gate,
        decision: 'aborted' as const,
        at: ctx.now().toISOString(),
        by: 'human' as const,
        reason: `aborted by ${by}`,
      },
    ].slice(-100),
  });
  breaker?.resume();
  // Nothing was decided: the callers see the aborted signal and stop.
  return { decision: 'reject', text: null, by: 'nobody', reason: null };
}

export async function askGate(
  ctx: WorkflowContext,
  gate: GateKind,
  title: string,
  lines: string[],
  answer: 'yes_no' | 'text',
  breaker: CircuitBreaker | null = null,
  documents: readonly GateDocument[] = [],
  lane: string | null = null,
): Promise<GateReply> {
  breaker?.pause();
  if (breaker) ctx.showBreaker(breaker, lane);
  // A human's time at a gate does not count against the phase timeout.
  const phase = ctx.activePhase;
  phase?.pause();
  const bus = ctx.busFor(lane);
  await ctx.openWait();
  bus.emit({ type: 'gate.requested', gate, title, lines, answer });
  const reply = await ctx.options.gates.ask(
    { gate, title, lines, answer, documents, ...(lane === null ? {} : { lane }) },
    ctx.options.signal,
  );
  if (ctx.options.signal.aborted && ctx.options.abortRequested?.()) return abortedAtGate(ctx, gate, breaker);
  const text = reply.text?.trim() ? reply.text.trim() : null;
  const decision: GateReply['decision'] =
    answer === 'text' && reply.decision !== 'reject' && text
      ? 'answer'
      : reply.decision === 'approve'
        ? 'approve'
        : 'reject';
  // The port's "no" from nobody (no terminal, no --yes) decided nothing: the callers wait or stop
  // on `by`, and the record says `unanswered`, never a reject a PR body would show as a human's.
  const recorded: GateDecision['decision'] = reply.by === 'nobody' ? 'unanswered' : decision;
  // Only a human's "no" carries a reason (issue 16 item 5); it goes to the agent's next attempt.
  const reason =
    decision === 'reject' && reply.by === 'human' && reply.reason?.trim()
      ? reply.reason.trim().slice(0, MAX_REASON_CHARS)
      : null;
  // A rejection's reason travels as the decision's words, like a typed answer.
  bus.emit({ type: 'gate.resolved', gate, decision, by: reply.by, answer: text ?? reason });
  await ctx.closeWait({
    gate_decisions: [
      ...ctx.workflow.gate_decisions,
      { gate, decision: recorded, at: ctx.now().toISOString(), by: reply.by, ...(reason ? { reason } : {}) },
    ].slice(-100),
  });
  breaker?.resume();
  if (breaker) ctx.showBreaker(breaker, lane);
  phase?.resume();
  return { decision, text, by: reply.by, reason };
}

/**
 * An agent asked the human something, or was denied a tool call: the answer goes into its next
 * run. "allow" (or yes) to a denied call adds it to the calls pre-approved from then on.
 * Returns the note for the next run, or null when nobody answered (the phase cannot go on).
 */
export async function answerQuestion(
  ctx: WorkflowContext,
  role: string,
  step: Extract<StepOutcome, { kind: 'question' }>,
  breaker: CircuitBreaker | null,
  /** The parallel lane whose agent asks, with its task (issue 19), or null. */
  lane: { readonly name: string; readonly task: number } | null = null,
): Promise<string | null> {
  const reply = await askGate(
    ctx,
    'input',
    lane ? `${role}-agent of task ${lane.task} (lane ${lane.name}) needs input` : `${role}-agent needs input`,
    [step.question],
    'text',
    breaker,
    [],
    lane?.name ?? null,
  );
  if (reply.decision !== 'answer' || !reply.text) return null;
  // Only a plain "allow" (or yes) pre-approves; anything longer is an answer in the human's words.
  const allow = step.denied.length > 0 && /^(allow|y|yes)$/i.test(reply.text.trim());
  if (!allow) {
    await ctx.update({ pending_answer: reply.text });
    return `In your previous run you asked the human:\n${step.question}\nThe human answered:\n${reply.text}`;
  }
  const patterns = step.denied.map((d) => ({ denied: d, pattern: toolPattern(d) }));
  const added = patterns.flatMap((p) => (p.pattern ? [p.pattern] : []));
  const refused = patterns.filter((p) => !p.pattern).map((p) => p.denied);
  await ctx.update({
    allowed_tools: [...new Set([...ctx.workflow.allowed_tools, ...added])].slice(-50),
    pending_answer: reply.text,
  });
  if (refused.length > 0)
    ctx.busFor(lane?.name ?? null).emit({
      type: 'log',
      level: 'warn',
      message: `cannot pre-approve ${refused.join('; ')}: only a single plain command can be (no ; & | ( ) or commas)`,
    });
  return [
    ...(added.length > 0
      ? [
          `The human allowed: ${step.denied.filter((d) => !refused.includes(d)).join('; ')}. Go on with the task.`,
        ]
      : []),
    ...(refused.length > 0
      ? [
          `These cannot be pre-approved as they are: ${refused.join('; ')}. Run each part as a single command instead.`,
        ]
      : []),
  ].join('\n');
}

/** "Bash npm install left-pad" -> "Bash(npm install left-pad)": exactly the call that was denied. */
function toolPattern(denied: string): string | null {
  const match = /^([A-Za-z]+)(?:\s+(.*))?$/.exec(denied.trim());
  if (!match) return null;
  const [, tool, target] = match;
  if (!target) return tool ?? null;
  // Claude Code never pre-approves a compound command by an exact rule (one with ; && || or |,
  // even inside quotes: checked with claude 2.1.330), so those are refused here, not silently kept.
  // Parentheses and commas are refused too: a model-written command must never be able to close
  // the rule early and open a wider one (`echo ) Bash(*`) in the comma-joined --allowedTools.
  return /[;|&(),]/.test(target) ? null : `${tool}(${target})`;
}

/** specs/TASKS.md, parsed (the runner's one reading of it). */
export async function readTasksFile(ctx: WorkflowContext): Promise<TasksParse> {
  return parseTasks(await readProjectFile(ctx, TASKS_FILE, 1_000_000));
}

/** Past this a workflow document is not read at all (it is cut to the caller's cap anyway). */
const DOCUMENT_MAX_BYTES = 16 * 1024 * 1024;

/**
 * A workflow document (spec, tasks, QA report), or '' when it is missing or not a plain file of
 * the repository: a link out (to a private file, a folder outside) or a FIFO is read as nothing.
 */
export async function readProjectFile(ctx: WorkflowContext, rel: string, cap = 60_000): Promise<string> {
  const read = await readRepoFile(ctx.setup.facts.root, rel, DOCUMENT_MAX_BYTES);
  const text = read.ok ? read.text : '';
  return text.length > cap ? `${text.slice(0, cap)}\n… (truncated)` : text;
}

export function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{([A-Z_]+)\}\}/g, (whole, name: string) => values[name] ?? whole);
}
