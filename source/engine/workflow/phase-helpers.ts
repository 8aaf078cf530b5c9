import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { GateKind } from '../events.js';
import type { CircuitBreaker } from '../supervise/circuit-breaker.js';
import type { StepOutcome } from './agent-step.js';
import type { PhaseResult, WorkflowContext } from './context.js';
import type { JudgedRun } from './judged-run.js';

/** Where the workflow's documents for humans live (DESIGN.md: ordinary tracked files). */
export const SPEC_FILE = 'specs/SPEC.md';
export const TASKS_FILE = 'specs/TASKS.md';
export const QA_FILE = 'specs/QA_REPORT.md';

export interface PhaseSignal {
  readonly signal: AbortSignal;
  timedOut(): boolean;
  dispose(): void;
}

/** The workflow's signal plus the phase timeout of seed 002 §6. */
export function phaseSignal(ctx: WorkflowContext, seconds: number): PhaseSignal {
  const timer = new AbortController();
  const handle = setTimeout(() => timer.abort(), seconds * 1000);
  handle.unref();
  return {
    signal: AbortSignal.any([ctx.options.signal, timer.signal]),
    timedOut: () => timer.signal.aborted,
    dispose: () => clearTimeout(handle),
  };
}

/** How a step that did not finish ends the phase (timeout, abort, interrupt, breaker). */
export function unfinished(
  ctx: WorkflowContext,
  step: StepOutcome,
  phase: PhaseSignal,
  role: string,
): PhaseResult {
  if (step.kind === 'breaker_open')
    return { kind: 'fail', reason: 'circuit_breaker_triggered', detail: step.detail };
  if (phase.timedOut())
    return {
      kind: 'fail',
      reason: 'phase_timeout',
      detail: `the ${ctx.workflow.state} phase ran past its timeout`,
    };
  if (step.kind === 'aborted') return stopped(ctx);
  if (step.kind === 'failed')
    return { kind: 'fail', reason: 'agent_failed', detail: `${role}-agent: ${step.detail}` };
  return { kind: 'fail', reason: 'agent_failed', detail: `${role}-agent did not finish` };
}

/** Ctrl-C (the workflow stays resumable) or `ralphy abort` (FAILED, reason aborted). */
export function stopped(ctx: WorkflowContext): PhaseResult {
  return ctx.options.abortRequested()
    ? { kind: 'fail', reason: 'aborted', detail: 'aborted by ralphy abort' }
    : { kind: 'stopped' };
}

export function judgedFailure(run: JudgedRun, role: string): PhaseResult | null {
  if (run.violations.length === 0) return null;
  return {
    kind: 'fail',
    reason: 'scope_violation',
    detail: `${role}-agent changed what it may not (rolled back): ${run.violations.slice(0, 5).join('; ')}`,
  };
}

/**
 * Asks a yes/no or text gate. The circuit breaker is paused meanwhile (seed 002 §6.1, special
 * case 1) and the wait has no limit; the decision is recorded in WORKFLOW.json.
 */
export async function askGate(
  ctx: WorkflowContext,
  gate: GateKind,
  title: string,
  lines: string[],
  answer: 'yes_no' | 'text',
  breaker: CircuitBreaker | null = null,
): Promise<{
  decision: 'approve' | 'reject' | 'answer';
  text: string | null;
  by: 'human' | 'auto' | 'nobody';
}> {
  breaker?.pause();
  const previous = ctx.workflow.status;
  await ctx.update({
    status: 'waiting',
    circuit_breaker: breaker?.snapshot() ?? ctx.workflow.circuit_breaker,
  });
  ctx.bus.emit({ type: 'gate.requested', gate, title, lines, answer });
  const reply = await ctx.options.gates.ask({ gate, title, lines, answer }, ctx.options.signal);
  const text = reply.text?.trim() ? reply.text.trim() : null;
  const decision: 'approve' | 'reject' | 'answer' =
    answer === 'text' && reply.decision !== 'reject' && text
      ? 'answer'
      : reply.decision === 'approve'
        ? 'approve'
        : 'reject';
  ctx.bus.emit({ type: 'gate.resolved', gate, decision, by: reply.by, answer: text });
  await ctx.update({
    status: previous === 'waiting' ? 'running' : previous,
    gate_decisions: [
      ...ctx.workflow.gate_decisions,
      { gate, decision, at: ctx.now().toISOString(), by: reply.by },
    ].slice(-100),
  });
  breaker?.resume();
  return { decision, text, by: reply.by };
}

/** An agent asked the human something: the answer goes into its next run (or the phase fails). */
export async function answerQuestion(
  ctx: WorkflowContext,
  role: string,
  question: string,
  breaker: CircuitBreaker | null,
): Promise<string | null> {
  const reply = await askGate(ctx, 'input', `${role}-agent needs input`, [question], 'text', breaker);
  if (reply.decision !== 'answer' || !reply.text) return null;
  await ctx.update({ pending_answer: reply.text });
  return reply.text;
}

/** Evidence of work: HEAD, the worktree's changes, the task list. A change is progress. */
export async function evidenceFingerprint(ctx: WorkflowContext): Promise<string> {
  const git = ctx.setup.git;
  const [head, status] = await Promise.all([
    git.run(['rev-parse', 'HEAD']),
    git.run(['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignore-submodules=dirty']),
  ]);
  const tasks = await readFile(join(ctx.setup.facts.root, TASKS_FILE)).catch(() => Buffer.alloc(0));
  return createHash('sha1').update(head.stdout).update(status.stdout).update(tasks).digest('hex');
}

export async function readProjectFile(ctx: WorkflowContext, rel: string, cap = 60_000): Promise<string> {
  const text = await readFile(join(ctx.setup.facts.root, rel), 'utf8').catch(() => '');
  return text.length > cap ? `${text.slice(0, cap)}\n… (truncated)` : text;
}

export function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{([A-Z_]+)\}\}/g, (whole, name: string) => values[name] ?? whole);
}
