import { plannerPass } from '../planner/pass.js';
import { openPrdSession, prdSubject } from '../planner/prd-session.js';
import { type PlannerPaths, plannerPaths } from '../planner/store.js';
import { planAtTerminal, type TerminalOutcome } from '../planner/terminal-session.js';
import type { PhaseResult, WorkflowContext } from './context.js';
import { askGate, stopped } from './phase-helpers.js';

/**
 * PLANNING (seed 004 before seed 002's SPECIFICATION): the Relay planner and the human agree on
 * what changes the spec, at a `plan` gate, until the planner is ready; its handoff then goes to
 * the spec-agent. Gate waits pause the circuit breaker, as every gate does; the planner runs
 * themselves are watched by it.
 */
export async function planningPhase(ctx: WorkflowContext): Promise<PhaseResult> {
  const { config } = ctx.setup;
  if (!config.planner.enabled) {
    ctx.bus.emit({ type: 'log', level: 'info', message: 'Planning is off (planner.enabled: false)' });
    return { kind: 'next', event: 'ready' };
  }
  const pp = plannerPaths(ctx.setup.paths);
  const opened = await openPrdSession(pp, ctx.prd, ctx.now());
  if (!opened.ok) return { kind: 'fail', reason: 'planning_failed', detail: opened.problem };
  if (!opened.created && opened.session.status === 'ready')
    ctx.bus.emit({
      type: 'log',
      level: 'info',
      message: `This PRD was planned already (${pp.relDir}/sessions/${opened.session.session_id}.json): its handoff goes to the spec-agent. Move that file aside to plan again.`,
    });
  const breaker = ctx.breakerFor('PLANNING');
  ctx.showBreaker(breaker);
  const outcome = await planAtTerminal({
    pp,
    session: opened.session,
    signal: ctx.options.signal,
    now: () => ctx.now(),
    overBudget: () => ctx.overBudget()?.detail ?? null,
    ask: (title, lines, answer) => askGate(ctx, 'plan', title, lines, answer, breaker),
    runPass: (session) =>
      plannerPass({
        pp,
        session,
        subject: prdSubject(ctx.prd),
        findings: [],
        config,
        bus: ctx.bus,
        now: () => ctx.now(),
        outbox: false,
        call: {
          runner: ctx.runner,
          cwd: ctx.setup.facts.root,
          signal: ctx.options.signal,
          clock: ctx.options.clock,
          breaker,
          onBreaker: ctx.breakerReporter(breaker),
          onCost: (usd, reported) => ctx.addCall(usd, reported),
          onWaiting: (until) => ctx.waiting(until),
        },
      }),
  });
  return resultOf(ctx, pp, outcome);
}

function resultOf(ctx: WorkflowContext, pp: PlannerPaths, outcome: TerminalOutcome): PhaseResult {
  switch (outcome.kind) {
    case 'ready':
      return { kind: 'next', event: 'ready' };
    case 'stopped':
      return stopped(ctx);
    case 'declined':
      return {
        kind: 'fail',
        reason: 'needs_input',
        detail:
          outcome.by === 'nobody'
            ? 'the planner asked questions and nobody can answer them (no terminal): run ralphy start in a terminal, or with --yes to proceed under the assumptions the planner states'
            : `you declined to answer the planner and to proceed; ralphy start resumes planning (${pp.relDir}/sessions/${outcome.session.session_id}.json keeps the answers)`,
      };
    case 'invalid':
      return {
        kind: 'fail',
        reason: 'planning_failed',
        detail: `the planner's answer broke the rules twice, so none of it was executed: ${outcome.problems.join('; ')}`,
      };
    case 'failed':
      return { kind: 'fail', reason: 'agent_failed', detail: `planner: ${outcome.detail}` };
    case 'unreadable':
      return { kind: 'fail', reason: 'planning_failed', detail: outcome.detail };
    case 'breaker_open':
      return { kind: 'fail', reason: 'circuit_breaker_triggered', detail: outcome.detail };
    case 'over_budget':
      return { kind: 'fail', reason: ctx.overBudget()?.reason ?? 'budget_exhausted', detail: outcome.detail };
  }
}
