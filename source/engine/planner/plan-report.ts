import type { EngineBus } from '../events.js';
import type { Verdict } from '../protocol/codes.js';
import type { IssueOutcome } from './issue-pass.js';
import type { PlanRefusal, PrdPlanResult } from './plan-entry.js';

/**
 * What `relais plan` says about each outcome, on the bus (the front end prints it), and the
 * verdict it comes to. `interrupted` is an interrupt, never a failure to report.
 */
export interface PlanVerdict {
  readonly verdict: Verdict;
  readonly interrupted: boolean;
}

const SUCCESS: PlanVerdict = { verdict: 'success', interrupted: false };
const STOP: PlanVerdict = { verdict: 'stop', interrupted: false };
const BLOCKED: PlanVerdict = { verdict: 'blocked', interrupted: false };
const INTERRUPTED: PlanVerdict = { verdict: 'stop', interrupted: true };

function say(bus: EngineBus) {
  return {
    info: (message: string) => bus.emit({ type: 'log', level: 'info', message }),
    error: (message: string) => bus.emit({ type: 'log', level: 'error', message }),
  };
}

export function reportRefusal(bus: EngineBus, refusal: PlanRefusal): PlanVerdict {
  const { info, error } = say(bus);
  error(`Cannot plan: ${refusal.detail}`);
  if (refusal.fix) info(`Fix: ${refusal.fix}`);
  return BLOCKED;
}

export function reportIssue(bus: EngineBus, issue: number, outcome: IssueOutcome): PlanVerdict {
  const { info, error } = say(bus);
  const posted = 'posted' in outcome && outcome.posted > 0 ? ` Posted ${outcome.posted} comment(s).` : '';
  switch (outcome.kind) {
    case 'blocked':
      error(`Cannot plan issue #${issue}: ${outcome.detail}`);
      info(`Fix: ${outcome.fix}`);
      return BLOCKED;
    case 'silent':
      info(
        `Issue #${issue}: no human comment since the planner's last one, so nothing to do (silence does nothing).${posted}`,
      );
      return SUCCESS;
    case 'ready_already':
      info(`Issue #${issue}: planning is done; the handoff is in the session file.${posted}`);
      return SUCCESS;
    case 'planned':
      info(
        `Issue #${issue}: ${outcome.session.status === 'ready' ? 'ready for the spec' : `${outcome.session.gaps.filter((g) => g.status === 'open').length} open question(s)`}.${posted}`,
      );
      return SUCCESS;
    case 'invalid':
      error(
        `Issue #${issue}: the planner's answer broke the rules twice; nothing was executed or posted: ${outcome.problems.join('; ')}`,
      );
      info('Fix: check relais/prompts/planner.system.txt and agents.planner.model, then run again.');
      return STOP;
    case 'failed':
      error(`Issue #${issue}: ${outcome.detail}`);
      info(`Fix: ${outcome.fix}`);
      return STOP;
    case 'interrupted':
      return INTERRUPTED;
  }
}

export function reportPrd(bus: EngineBus, outcome: Exclude<PrdPlanResult, PlanRefusal>): PlanVerdict {
  const { info, error } = say(bus);
  switch (outcome.kind) {
    case 'ready':
      if (outcome.handoff) info(outcome.handoff);
      info('Planning is done: ralphy start gives this handoff to the spec-agent.');
      return SUCCESS;
    case 'declined':
      error(
        outcome.by === 'nobody'
          ? 'The planner asked questions and nobody can answer them here. Run relais plan in a terminal, or with --yes to proceed under its assumptions.'
          : 'Planning stopped without an answer; run relais plan again to go on (the answers so far are kept).',
      );
      return STOP;
    case 'invalid':
      error(
        `The planner's answer broke the rules twice; nothing was executed: ${outcome.problems.join('; ')}`,
      );
      return STOP;
    case 'failed':
    case 'breaker_open':
    case 'over_budget':
      error(`Planning stopped: ${outcome.detail}`);
      return STOP;
    case 'unreadable':
      error(`Cannot plan: ${outcome.detail}`);
      return BLOCKED;
    case 'stopped':
      return INTERRUPTED;
  }
}
