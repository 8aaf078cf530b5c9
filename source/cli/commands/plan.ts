import { join, resolve } from 'node:path';
import { claudeRunner } from '../../engine/agents/claude-code/run-claude.js';
import { findExecutable } from '../../engine/agents/find-executable.js';
import type { EngineBus } from '../../engine/events.js';
import {
  handoffText,
  type IssueOutcome,
  loadPlannerStats,
  planIssue,
  plannerPaths,
  planPrd,
  statsLines,
  type TerminalOutcome,
} from '../../engine/planner/index.js';
import { readLearnings } from '../../engine/planner/store.js';
import { realClock } from '../../engine/supervise/clock.js';
import { loadSetup, sandboxRefusal, type TickSetup } from '../../engine/tick/preflight.js';
import { readPrd } from '../../engine/workflow/prd.js';
import { acquireLock } from '../../engine/workspace/lock.js';
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
  const noSandbox = sandboxRefusal(setup.sandbox);
  if (noSandbox && !flags.stats) {
    println(io.stdout, `BLOCKED: ${noSandbox.detail}`);
    return EXIT.BLOCKED;
  }
  if (flags.stats) return printStats(io, setup, flags.json);
  const issue = flags.issue;
  return withEngine(io, { json: flags.json, onInterrupt: 'stopping the planner' }, (session) =>
    issue !== undefined ? issueMode(io, setup, session, issue) : prdMode(io, setup, session, flags),
  );
}

async function printStats(io: CommandIo, setup: TickSetup, json: boolean): Promise<number> {
  const stats = await loadPlannerStats(plannerPaths(setup.paths));
  if (json) println(io.stdout, JSON.stringify(stats));
  else for (const line of statsLines(stats)) println(io.stdout, line);
  return EXIT.SUCCESS;
}

async function issueMode(io: CommandIo, setup: TickSetup, { bus, signal }: EngineSession, issue: number) {
  const claude = await agentCli(setup, io, bus);
  if (!claude) return EXIT.BLOCKED;
  const outcome = await planIssue({
    issue,
    paths: setup.paths,
    root: setup.facts.root,
    config: setup.config,
    env: io.env,
    bus,
    signal,
    clock: realClock,
    runner: claudeRunner({
      command: claude,
      extraEnv: setup.config.claude_code_cli.extra_env,
      env: io.env,
      sandbox: setup.sandbox,
    }),
    now: () => new Date(),
  });
  return reportIssue(bus, issue, outcome);
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
  const prd = await readPrd(join(setup.facts.root, 'PRD.md'));
  if (!prd.ok) {
    bus.emit({ type: 'log', level: 'error', message: `Cannot plan: ${prd.problem}` });
    return EXIT.BLOCKED;
  }
  const claude = await agentCli(setup, io, bus);
  if (!claude) return EXIT.BLOCKED;
  // PRD planning shares its session with `ralphy start`: one of them at a time.
  const lock = await acquireLock(setup.paths.lock, 'relais plan');
  if (!lock.ok) {
    bus.emit({
      type: 'log',
      level: 'error',
      message: `Cannot plan: another run holds the workspace lock: ${lock.detail}`,
    });
    return EXIT.BLOCKED;
  }
  const { gates, close } = chooseGates(io, { json: flags.json, yes: flags.yes, appGates: null });
  try {
    const outcome = await planPrd({
      paths: setup.paths,
      root: setup.facts.root,
      prd: prd.prd,
      config: setup.config,
      bus,
      gates,
      signal,
      clock: realClock,
      runner: claudeRunner({
        command: claude,
        extraEnv: setup.config.claude_code_cli.extra_env,
        env: io.env,
        sandbox: setup.sandbox,
      }),
      now: () => new Date(),
    });
    return await reportPrd(bus, setup, outcome);
  } finally {
    close();
    await lock.lock.release();
  }
}

async function reportPrd(
  bus: EngineBus,
  setup: TickSetup,
  outcome: TerminalOutcome | { kind: 'unreadable'; detail: string },
): Promise<number> {
  const info = (message: string) => bus.emit({ type: 'log', level: 'info', message });
  const error = (message: string) => bus.emit({ type: 'log', level: 'error', message });
  switch (outcome.kind) {
    case 'ready': {
      const learnings = await readLearnings(plannerPaths(setup.paths));
      info(handoffText(outcome.session, learnings.ok ? learnings.file.learnings : []));
      info('Planning is done: ralphy start gives this handoff to the spec-agent.');
      return EXIT.SUCCESS;
    }
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

async function agentCli(setup: TickSetup, io: CommandIo, bus: EngineBus): Promise<string | null> {
  const command = setup.config.claude_code_cli.command;
  const found = await findExecutable(command, io.env, setup.facts.root);
  if (!found)
    bus.emit({
      type: 'log',
      level: 'error',
      message: `The agent CLI (${command}) was not found. Fix: npm install -g @anthropic-ai/claude-code, or set claude_code_cli.command.`,
    });
  return found;
}
