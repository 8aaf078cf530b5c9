import { resolve } from 'node:path';
import {
  type EngineBus,
  type IssueOutcome,
  loadSetup,
  type PlanRefusal,
  type PrdPlanResult,
  planIssueEntry,
  plannerStatsOf,
  planPrdEntry,
  statsLines,
  type TickSetup,
} from '../../engine/index.js';
import { type EngineSession, withEngine } from '../engine-session.js';
import { EXIT } from '../exit-codes.js';
import { chooseGates } from '../front-end/choose-gates.js';
import { type CommandIo, println } from '../io.js';

/**
 * `relais plan [dir]`: the Relay planner (seed 004) on PRD.md at this terminal, the same session
 * `ralphy start` opens with. `--issue <n>`: one planner pass on a GitHub issue thread through gh,
 * for a scheduler or CI. `--stats`: the quality signals of every planning session.
 */
export interface PlanFlags {
  readonly json: boolean;
  readonly yes: boolean;
  readonly issue: number | undefined;
  readonly stats: boolean;
}

export async function planCommand(
  io: CommandIo,
  projectArg: string | undefined,
  flags: PlanFlags,
): Promise<number> {
  if (flags.issue !== undefined && (!Number.isInteger(flags.issue) || flags.issue < 1)) {
    println(io.stderr, '--issue must be an issue number (a whole number of at least 1)');
    return EXIT.USAGE;
  }
  if (flags.stats && flags.issue !== undefined) {
    println(io.stderr, '--stats shows every session: it does not take --issue');
    return EXIT.USAGE;
  }
  const root = resolve(io.cwd, projectArg ?? '.');
  const loaded = await loadSetup(root, io.env);
  if (!loaded.ok) {
    println(io.stdout, `BLOCKED: ${loaded.block.detail}\n  Fix: run relais init at the repository root.`);
    return EXIT.BLOCKED;
  }
  const setup = loaded.setup;
  if (flags.stats) return printStats(io, setup, flags.json);
  const issue = flags.issue;
  return withEngine(io, { json: flags.json, onInterrupt: 'stopping the planner' }, (session) =>
    issue !== undefined ? issueMode(io, setup, session, issue) : prdMode(io, setup, session, flags),
  );
}

async function printStats(io: CommandIo, setup: TickSetup, json: boolean): Promise<number> {
  const stats = await plannerStatsOf(setup);
  if (json) println(io.stdout, JSON.stringify(stats));
  else for (const line of statsLines(stats)) println(io.stdout, line);
  return EXIT.SUCCESS;
}

async function issueMode(io: CommandIo, setup: TickSetup, { bus, signal }: EngineSession, issue: number) {
  const outcome = await planIssueEntry({ setup, env: io.env, bus, signal }, issue);
  return outcome.kind === 'cannot_start' ? cannotStart(bus, outcome) : reportIssue(bus, issue, outcome);
}

function cannotStart(bus: EngineBus, refusal: PlanRefusal): number {
  bus.emit({ type: 'log', level: 'error', message: `Cannot plan: ${refusal.detail}` });
  if (refusal.fix) bus.emit({ type: 'log', level: 'info', message: `Fix: ${refusal.fix}` });
  return EXIT.BLOCKED;
}

function reportIssue(bus: EngineBus, issue: number, outcome: IssueOutcome): number {
  const info = (message: string) => bus.emit({ type: 'log', level: 'info', message });
  const error = (message: string) => bus.emit({ type: 'log', level: 'error', message });
  const posted = 'posted' in outcome && outcome.posted > 0 ? ` Posted ${outcome.posted} comment(s).` : '';
  switch (outcome.kind) {
    case 'blocked':
      error(`Cannot plan issue #${issue}: ${outcome.detail}`);
      info(`Fix: ${outcome.fix}`);
      return EXIT.BLOCKED;
    case 'silent':
      info(
        `Issue #${issue}: no human comment since the planner's last one, so nothing to do (silence does nothing).${posted}`,
      );
      return EXIT.SUCCESS;
    case 'ready_already':
      info(`Issue #${issue}: planning is done; the handoff is in the session file.${posted}`);
      return EXIT.SUCCESS;
    case 'planned':
      info(
        `Issue #${issue}: ${outcome.session.status === 'ready' ? 'ready for the spec' : `${outcome.session.gaps.filter((g) => g.status === 'open').length} open question(s)`}.${posted}`,
      );
      return EXIT.SUCCESS;
    case 'invalid':
      error(
        `Issue #${issue}: the planner's answer broke the rules twice; nothing was executed or posted: ${outcome.problems.join('; ')}`,
      );
      info('Fix: check relais/prompts/planner.system.txt and agents.planner.model, then run again.');
      return EXIT.STOP;
    case 'failed':
      error(`Issue #${issue}: ${outcome.detail}`);
      info(`Fix: ${outcome.fix}`);
      return EXIT.STOP;
    case 'interrupted':
      return EXIT.INTERRUPTED;
  }
}

async function prdMode(io: CommandIo, setup: TickSetup, { bus, signal }: EngineSession, flags: PlanFlags) {
  const { gates, close } = chooseGates(io, { json: flags.json, yes: flags.yes, appGates: null });
  try {
    const outcome = await planPrdEntry({ setup, env: io.env, bus, signal }, gates);
    return outcome.kind === 'cannot_start' ? cannotStart(bus, outcome) : reportPrd(bus, outcome);
  } finally {
    close();
  }
}

function reportPrd(bus: EngineBus, outcome: Exclude<PrdPlanResult, PlanRefusal>): number {
  const info = (message: string) => bus.emit({ type: 'log', level: 'info', message });
  const error = (message: string) => bus.emit({ type: 'log', level: 'error', message });
  switch (outcome.kind) {
    case 'ready':
      if (outcome.handoff) info(outcome.handoff);
      info('Planning is done: ralphy start gives this handoff to the spec-agent.');
      return EXIT.SUCCESS;
    case 'declined':
      error(
        outcome.by === 'nobody'
          ? 'The planner asked questions and nobody can answer them here. Run relais plan in a terminal, or with --yes to proceed under its assumptions.'
          : 'Planning stopped without an answer; run relais plan again to go on (the answers so far are kept).',
      );
      return EXIT.STOP;
    case 'invalid':
      error(
        `The planner's answer broke the rules twice; nothing was executed: ${outcome.problems.join('; ')}`,
      );
      return EXIT.STOP;
    case 'failed':
    case 'breaker_open':
    case 'over_budget':
      error(`Planning stopped: ${outcome.detail}`);
      return EXIT.STOP;
    case 'unreadable':
      error(`Cannot plan: ${outcome.detail}`);
      return EXIT.BLOCKED;
    case 'stopped':
      return EXIT.INTERRUPTED;
  }
}
