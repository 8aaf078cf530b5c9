import { join } from 'node:path';
import type { EngineBus } from '../events.js';
import type { GatePort } from '../gates.js';
import { remediationOf } from '../protocol/codes.js';
import { warnIfSandboxOff } from '../sandbox/off-warning.js';
import {
  acquireLock,
  agentRunnerFor,
  loadSetup,
  missingAgentCommand,
  sandboxRefusal,
  type TickSetup,
} from '../session/index.js';
import { readPrd } from '../session/prd.js';
import { realClock } from '../supervise/clock.js';
import { handoffText } from './handoff.js';
import { type IssueOutcome, planIssue } from './issue-pass.js';
import { type PlanVerdict, reportIssue, reportPrd, reportRefusal } from './plan-report.js';
import { planPrd } from './prd-planning.js';
import { loadPlannerStats, type PlannerStats } from './stats.js';
import { plannerPaths, readLearnings } from './store.js';
import type { TerminalOutcome } from './terminal-session.js';

/**
 * `relais plan`'s entry (seed 004): load the setup, then plan PRD.md at a terminal, run one pass
 * on a GitHub issue thread, or read the statistics. The planning modes check the planner's agent
 * CLI (`agents.planner`), build its runner from the config and say their outcome on the bus; the
 * command maps the verdict to an exit code and prints the statistics.
 */

export type PlanMode =
  | { readonly kind: 'prd' }
  | { readonly kind: 'issue'; readonly issue: number }
  | { readonly kind: 'stats' };

export interface PlanRequest {
  readonly root: string;
  readonly env: NodeJS.ProcessEnv;
  readonly bus: EngineBus;
  readonly signal: AbortSignal;
  /** Who answers the planner's questions in PRD mode. */
  readonly gates: GatePort;
  readonly mode: PlanMode;
}

export interface PlanResult extends PlanVerdict {
  /** With `--stats`: every planning session's quality signals. */
  readonly stats: PlannerStats | null;
}

export async function planEntry(request: PlanRequest): Promise<PlanResult> {
  const { bus, mode } = request;
  const loaded = await loadSetup(request.root, request.env);
  if (!loaded.ok) {
    const refusal = {
      kind: 'cannot_start',
      detail: loaded.block.detail,
      fix: 'run relais init at the repository root.',
    } as const;
    return { ...reportRefusal(bus, refusal), stats: null };
  }
  const run: PlanRun = { setup: loaded.setup, env: request.env, bus, signal: request.signal };
  if (mode.kind === 'stats')
    return { verdict: 'success', interrupted: false, stats: await plannerStatsOf(loaded.setup) };
  if (mode.kind === 'issue') {
    const outcome = await planIssueEntry(run, mode.issue);
    const said =
      outcome.kind === 'cannot_start' ? reportRefusal(bus, outcome) : reportIssue(bus, mode.issue, outcome);
    return { ...said, stats: null };
  }
  const outcome = await planPrdEntry(run, request.gates);
  return {
    ...(outcome.kind === 'cannot_start' ? reportRefusal(bus, outcome) : reportPrd(bus, outcome)),
    stats: null,
  };
}

interface PlanRun {
  readonly setup: TickSetup;
  readonly env: NodeJS.ProcessEnv;
  readonly bus: EngineBus;
  readonly signal: AbortSignal;
}

/** Before the planner could run: its agent CLI is missing, PRD.md is unusable, or the lock is held. */
export type PlanRefusal = {
  readonly kind: 'cannot_start';
  readonly detail: string;
  readonly fix: string | null;
};

export type PrdPlanResult =
  | PlanRefusal
  | (TerminalOutcome & { readonly handoff?: string })
  | { readonly kind: 'unreadable'; readonly detail: string };

function plannerStatsOf(setup: TickSetup): Promise<PlannerStats> {
  return loadPlannerStats(plannerPaths(setup.paths));
}

async function planIssueEntry(run: PlanRun, issue: number): Promise<IssueOutcome | PlanRefusal> {
  const refused = await agentMissing(run);
  if (refused) return refused;
  return planIssue({
    issue,
    paths: run.setup.paths,
    root: run.setup.facts.root,
    config: run.setup.config,
    env: run.env,
    bus: run.bus,
    signal: run.signal,
    clock: realClock,
    runner: agentRunnerFor(run.setup.config, 'planner', {
      env: run.env,
      root: run.setup.facts.root,
      sandbox: run.setup.sandbox,
    }),
    now: () => new Date(),
  });
}

async function planPrdEntry(run: PlanRun, gates: GatePort): Promise<PrdPlanResult> {
  const { setup } = run;
  const prd = await readPrd(join(setup.facts.root, 'PRD.md'));
  if (!prd.ok) return { kind: 'cannot_start', detail: prd.problem, fix: null };
  const refused = await agentMissing(run);
  if (refused) return refused;
  // PRD planning shares its session with `ralphy start`: one of them at a time.
  const lock = await acquireLock(setup.paths.lock, 'relais plan');
  if (!lock.ok)
    return {
      kind: 'cannot_start',
      detail: `another run holds the workspace lock: ${lock.detail}`,
      fix: null,
    };
  try {
    const outcome = await planPrd({
      paths: setup.paths,
      root: setup.facts.root,
      prd: prd.prd,
      config: setup.config,
      bus: run.bus,
      gates,
      signal: run.signal,
      clock: realClock,
      runner: agentRunnerFor(setup.config, 'planner', {
        env: run.env,
        root: setup.facts.root,
        sandbox: setup.sandbox,
      }),
      now: () => new Date(),
    });
    if (outcome.kind !== 'ready') return outcome;
    const learnings = await readLearnings(plannerPaths(setup.paths));
    return {
      ...outcome,
      handoff: handoffText(outcome.session, learnings.ok ? learnings.file.learnings : []),
    };
  } finally {
    await lock.lock.release();
  }
}

async function agentMissing(run: PlanRun): Promise<PlanRefusal | null> {
  const { setup, env } = run;
  // Issue 14: no agent starts without the OS sandbox unless the config says "off".
  const noSandbox = sandboxRefusal(setup.sandbox);
  if (noSandbox)
    return {
      kind: 'cannot_start',
      detail: `${noSandbox.code}: ${noSandbox.detail}`,
      fix: remediationOf(noSandbox.code),
    };
  warnIfSandboxOff(setup.sandbox, run.bus);
  const missing = await missingAgentCommand(setup.config, 'planner', env, setup.facts.root);
  return missing
    ? {
        kind: 'cannot_start',
        detail: `the planner's agent CLI: ${missing}`,
        fix: 'install it (npm install -g @anthropic-ai/claude-code for claude, @openai/codex for codex), or set its command in relais.config.json.',
      }
    : null;
}
