import { implementInLanes } from '../parallel/run-lanes.js';
import {
  type FailureReason,
  nextStepsAt,
  PROJECT_ROOT_TOKEN,
  type WorkflowFile,
  type WorkflowStateName,
} from '../protocol/workflow.js';
import { type AbortWatch, watchAbortRequests } from './abort-request.js';
import type { PhaseResult, WorkflowContext, WorkflowOptions } from './context.js';
import { qaGate, specGate } from './gate-phases.js';
import { implementWithCycle } from './implement-cycle.js';
import { implementSingle } from './implement-single.js';
import { implementWithTicks } from './implement-ticks.js';
import { reportOnIssue } from './issue-report.js';
import { attemptsFor, type LanesWanted, lanesWanted } from './lanes-options.js';
import { readTasksFile, TASKS_FILE } from './phase-helpers.js';
import { planningPhase } from './planning-phase.js';
import { prPhase } from './pr-phase.js';
import { prepareWorkflow } from './prepare.js';
import { qaPhase } from './qa-phase.js';
import { recordTasks, specPhase } from './spec-phase.js';
import { nextState, TERMINAL } from './transitions.js';

/**
 * `ralphy start` (seed 002): PRD.md → PLANNING (seed 004) → SPECIFICATION → [y/n] → IMPLEMENTATION → QA → [y/n] → PR →
 * COMPLETED, exactly along the §8 transitions, each transition persisted in WORKFLOW.json before
 * it is announced. An abort (`ralphy abort`) ends in FAILED with reason `aborted`; an interrupt
 * (Ctrl-C) leaves the workflow in its state with status `interrupted`, to be resumed.
 */

export interface WorkflowOutcome {
  /** `blocked`: the workflow could not start (prerequisites, lock, dirty tree, PRD). */
  /** `needs_input`: a gate nobody could answer; the workflow waits there for `ralphy start`. */
  readonly status: 'completed' | 'failed' | 'rejected' | 'interrupted' | 'needs_input' | 'blocked';
  readonly state: WorkflowStateName | null;
  readonly reason: FailureReason | null;
  readonly detail: string | null;
  readonly fix: string | null;
  readonly prUrl: string | null;
  readonly nextSteps: string[];
}

export async function runWorkflow(given: WorkflowOptions): Promise<WorkflowOutcome> {
  // `ralphy abort` reaches this run through the workspace; it aborts the same signal as Ctrl-C,
  // and abortRequested() tells the two apart.
  const abort = new AbortController();
  const options: WorkflowOptions = {
    ...given,
    signal: AbortSignal.any([given.signal, abort.signal]),
    abortRequested: () => abort.signal.aborted || (given.abortRequested?.() ?? false),
    abortedBy: () => (abort.signal.aborted ? 'ralphy abort' : (given.abortedBy?.() ?? 'an abort request')),
  };
  const watcher = watchAbortRequests(options.clock, () => {
    options.bus.emit({ type: 'log', level: 'warn', message: 'ralphy abort: stopping the agent' });
    abort.abort();
  });
  try {
    return await prepareAndDrive(options, watcher);
  } finally {
    await watcher.dispose();
  }
}

async function prepareAndDrive(options: WorkflowOptions, watcher: AbortWatch): Promise<WorkflowOutcome> {
  const prepared = await prepareWorkflow(options, (paths) => watcher.attach(paths));
  if (!prepared.ok) {
    options.bus.emit({ type: 'log', level: 'error', message: `Cannot start: ${prepared.detail}` });
    options.bus.emit({ type: 'log', level: 'info', message: `Fix: ${prepared.fix}` });
    return {
      status: 'blocked',
      state: null,
      reason: null,
      detail: prepared.detail,
      fix: prepared.fix,
      prUrl: null,
      nextSteps: [],
    };
  }
  const { ctx, lock, resumedFrom } = prepared;
  try {
    announceStart(ctx, options, resumedFrom);
    if (ctx.workflow.state === 'IDLE') await leaveIdle(ctx);
    return await drive(ctx);
  } finally {
    await lock.release();
  }
}

/** Seed 002 §8 `start`, into seed 004's PLANNING; straight to SPECIFICATION when planning is off. */
async function leaveIdle(ctx: WorkflowContext): Promise<void> {
  // An issue's planning happened on the issue (`relais plan --issue`); its handoff is the PRD.
  const planned = ctx.workflow.issue !== null;
  if (planned)
    ctx.bus.emit({
      type: 'log',
      level: 'info',
      message: `Planning was done on issue #${ctx.workflow.issue}: its thread and settled questions are the PRD`,
    });
  if (ctx.setup.config.planner.enabled && !planned) return ctx.enter(nextState('IDLE', 'start'), 'running');
  await ctx.update({ completed_phases: [...ctx.workflow.completed_phases, 'PLANNING'] });
  await ctx.enter(nextState('IDLE', 'skip_planning'), 'running');
}

async function drive(ctx: WorkflowContext): Promise<WorkflowOutcome> {
  let nextSteps: string[] = [];
  for (;;) {
    const state = ctx.workflow.state;
    if (TERMINAL.includes(state)) return finish(ctx, [...nextSteps, ...(await reportBack(ctx))]);
    if (ctx.options.pauseBefore?.(state)) {
      // The fleet's phase boundary (issue 20): stop cleanly before the phase, resumable there.
      await ctx.enter(state, 'interrupted');
      return finish(ctx, []);
    }
    if (ctx.options.pauseRequested?.()) return pausedBefore(ctx, state);
    let result: PhaseResult;
    if (state === 'PR') {
      const pr = await prPhase(ctx);
      result = pr.result;
      nextSteps = pr.nextSteps;
    } else {
      result = await runPhase(ctx, state);
    }
    if (result.kind === 'stopped') {
      await ctx.enter(state, 'interrupted');
      return finish(ctx, [`ralphy start ${PROJECT_ROOT_TOKEN} (it asks to resume at ${state})`]);
    }
    if (result.kind === 'unanswered') {
      await ctx.enter(state, 'interrupted', { failure_detail: result.detail });
      const outcome = await finish(ctx, [
        `ralphy start ${PROJECT_ROOT_TOKEN} in a terminal to answer the gate (or add --yes to approve it)`,
      ]);
      return { ...outcome, status: 'needs_input' };
    }
    if (result.kind === 'fail') {
      const event = result.reason === 'aborted' ? 'abort' : 'fail';
      await ctx.enter(nextState(state, event), 'failed', {
        failure_reason: result.reason,
        failure_detail: result.detail.slice(0, 2000),
      });
      continue;
    }
    const next = nextState(state, result.event);
    if (state === 'AWAITING_QA_VALIDATION' && result.event === 'reject') {
      // A rejected QA report is not a completed phase: after the fixes, a resume runs QA again.
      await ctx.enter(next, 'failed', {
        failure_reason: 'rejected_at_qa',
        failure_detail: 'the QA report was rejected at the second gate',
        completed_phases: ctx.workflow.completed_phases.filter((p) => p !== 'QA'),
      });
      continue;
    }
    await ctx.update({ completed_phases: [...new Set([...ctx.workflow.completed_phases, state as never])] });
    if (next === 'REJECTED') {
      await ctx.enter(next, 'rejected', {
        failure_detail: 'the specification was rejected at the first gate',
      });
      continue;
    }
    await ctx.enter(
      next,
      next === 'COMPLETED' ? 'completed' : 'running',
      next === 'COMPLETED' ? { current_task: null } : {},
    );
  }
}

/** The pause key: stopped cleanly before `state`'s phase, which a resume runs. */
async function pausedBefore(ctx: WorkflowContext, state: WorkflowStateName): Promise<WorkflowOutcome> {
  ctx.bus.emit({ type: 'log', level: 'info', message: `Paused before ${state}: no further agent starts` });
  await ctx.enter(state, 'interrupted');
  return finish(ctx, [`ralphy start ${PROJECT_ROOT_TOKEN} (it asks to resume at ${state})`]);
}

/** `--issue`: the ending goes back to the issue; a report that could not be posted is a next step. */
async function reportBack(ctx: WorkflowContext): Promise<string[]> {
  const issue = ctx.workflow.issue;
  if (issue === null) return [];
  const report = await reportOnIssue(ctx, issue);
  if (report.kind === 'posted') {
    ctx.bus.emit({ type: 'log', level: 'info', message: `Reported on issue #${issue}: ${report.url}` });
    return [];
  }
  ctx.bus.emit({ type: 'log', level: 'warn', message: `Not reported on issue #${issue}: ${report.detail}` });
  return [report.nextStep];
}

async function runPhase(ctx: WorkflowContext, state: WorkflowStateName): Promise<PhaseResult> {
  // No agent phase starts once the workflow's spend cap is reached (a running one is stopped).
  const over = ['PLANNING', 'SPECIFICATION', 'IMPLEMENTATION', 'QA'].includes(state)
    ? ctx.overBudget()
    : null;
  if (over) return { kind: 'fail', ...over };
  switch (state) {
    case 'PLANNING':
      return planningPhase(ctx);
    case 'SPECIFICATION':
      return specPhase(ctx);
    case 'AWAITING_SPEC_VALIDATION':
      return specGate(ctx);
    case 'IMPLEMENTATION': {
      // TASKS.md is the source of the task list, on a resume too (a human may have edited it).
      const problem = await syncTasks(ctx);
      if (problem) return { kind: 'fail', reason: 'invalid_output', detail: problem };
      if (ctx.workflow.engine === 'single') return implementSingle(ctx);
      if (ctx.workflow.engine === 'cycle') return implementWithCycle(ctx);
      // Issue 19: `--parallel N`, `--attempts K` or a risky task under workflow.best_of run in
      // lanes; otherwise one task at a time in the main tree, today's loop.
      const wanted = lanesWanted(ctx.options, ctx.setup.config);
      return (await needsLanes(ctx, wanted)) ? implementInLanes(ctx, wanted) : implementWithTicks(ctx);
    }
    case 'QA':
      return qaPhase(ctx);
    case 'AWAITING_QA_VALIDATION':
      return qaGate(ctx);
    default:
      throw new Error(`no phase runs in state ${state}`);
  }
}

/** More than one lane, or more than one attempt at a task still to do. */
async function needsLanes(ctx: WorkflowContext, wanted: LanesWanted): Promise<boolean> {
  if (wanted.lanes > 1) return true;
  const parsed = await readTasksFile(ctx);
  if (!parsed.ok) return false;
  return parsed.tasks.some((t) => t.status !== 'completed' && attemptsFor(wanted, t.risky) > 1);
}

/** Reads TASKS.md into the task records; a file that no longer parses is a problem, never ignored. */
async function syncTasks(ctx: WorkflowContext): Promise<string | null> {
  const parsed = await readTasksFile(ctx);
  if (!parsed.ok) return `${TASKS_FILE} does not parse: ${parsed.problems.slice(0, 5).join('; ')}`;
  await recordTasks(ctx, parsed.tasks);
  return null;
}

function announceStart(
  ctx: WorkflowContext,
  options: WorkflowOptions,
  resumedFrom: WorkflowStateName | null,
): void {
  const w = ctx.workflow;
  options.bus.emit({
    type: 'workflow.started',
    project: ctx.setup.facts.root,
    prd_title: w.prd_title,
    base_branch: w.base_branch,
    feature_branch: w.feature_branch,
    engine: w.engine,
    resumed_from: resumedFrom,
    completed_phases: resumedFrom ? [...w.completed_phases] : [],
    max_cost_usd: w.max_cost_usd,
    cost_usd: w.cost_usd,
    unreported_usd: w.unreported_usd,
    unreported_calls: w.unreported_calls,
    phases: w.phases,
    tasks: w.tasks.map((t) => ({
      number: t.number,
      title: t.title,
      status: t.status,
      claimed: t.claimed,
      verified: t.verified,
      verdict: t.verdict,
    })),
  });
}

async function finish(ctx: WorkflowContext, stored: string[]): Promise<WorkflowOutcome> {
  await ctx.update({ next_steps: stored.slice(0, 10) });
  const nextSteps = nextStepsAt(stored, ctx.setup.facts.root);
  const w: WorkflowFile = ctx.workflow;
  const status = statusOf(w);
  ctx.bus.emit({
    type: 'run.finished',
    state: w.state,
    status: w.status,
    reason: w.failure_reason,
    detail: w.failure_detail,
    pr_url: w.pr_url,
    pr_outcome: w.pr_outcome,
    next_steps: nextSteps,
  });
  return {
    status,
    state: w.state,
    reason: w.failure_reason,
    detail: w.failure_detail,
    fix: null,
    prUrl: w.pr_url,
    nextSteps,
  };
}

function statusOf(w: WorkflowFile): WorkflowOutcome['status'] {
  if (w.status === 'interrupted') return 'interrupted';
  if (w.state === 'COMPLETED') return 'completed';
  if (w.state === 'REJECTED') return 'rejected';
  return 'failed';
}
