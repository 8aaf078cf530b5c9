import type { EngineBus } from '../events.js';
import type { GatePort } from '../gates.js';
import type { RelaisConfig } from '../protocol/config.js';
import {
  type CodexCli,
  type CycleAgents,
  type CyclePolicy,
  codexCliSchema,
  cycleAgentsSchema,
  cyclePolicySchema,
  splitCycleSection,
} from '../protocol/cycle-policy.js';
import { warnIfSandboxOff } from '../sandbox/off-warning.js';
import { resolveSandbox, SANDBOX_FIX, type Sandbox } from '../sandbox/sandbox.js';
import { loadConfig } from '../session/index.js';
import { realClock } from '../supervise/clock.js';
import type { CycleRunners } from './context.js';
import { type CycleLoopResult, type LoopEnd, runCycleLoop } from './loop.js';
import { type CycleOutcome, runCycle } from './run-cycle.js';
import { cycleRunners } from './runners.js';
import { resumeCycle } from './status.js';
import { supervisedCycleRunners } from './supervision.js';

/**
 * `relais cycle`'s entry (seed 003): the config's cycle sections (`cycle`, its roles in
 * `cycle.agents`, and `codex_cli`, whose defaults are the seed's; a caller such as a test may
 * give its own), a paused cycle resumed when asked, then one cycle or a loop of them with the
 * configured agents under the breaker.
 */

export interface CycleSections {
  readonly policy: CyclePolicy;
  readonly agents: CycleAgents;
  readonly codexCli: CodexCli;
}

export interface CycleSetup extends CycleSections {
  readonly root: string;
  readonly config: RelaisConfig;
  /** The OS sandbox its agents and verifications run in (issue 14). */
  readonly sandbox: Sandbox;
}

export type GivenSections = Partial<{ policy: unknown; agents: unknown; codexCli: unknown }>;

export async function loadCycleSetup(
  root: string,
  given: GivenSections = {},
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ ok: true; setup: CycleSetup } | { ok: false; detail: string; fix?: string }> {
  const loaded = await loadConfig(root);
  if (!loaded.ok) return { ok: false, detail: loaded.detail };
  const fromConfig = splitCycleSection(loaded.config.cycle);
  const parsed = parseSections({
    policy: given.policy ?? fromConfig.policy,
    agents: given.agents ?? fromConfig.agents,
    codexCli: given.codexCli ?? loaded.config.codex_cli,
  });
  if (!parsed.ok) return parsed;
  // The sandbox knows the CODEX_HOME of the codex_cli section the cycle really uses (a caller's
  // may differ from the config file's): it becomes Codex's private overlay there.
  const sandbox = await resolveSandbox({ ...loaded.config, codex_cli: parsed.sections.codexCli }, root, env);
  // Issue 14: nothing runs without the sandbox unless the config says "off".
  if (sandbox.kind === 'unavailable')
    return { ok: false, detail: `BLOCKED_SANDBOX_UNAVAILABLE: ${sandbox.reason}`, fix: SANDBOX_FIX };
  return { ok: true, setup: { root, config: loaded.config, ...parsed.sections, sandbox } };
}

export interface CycleRun {
  readonly bus: EngineBus;
  readonly signal: AbortSignal;
  readonly env: NodeJS.ProcessEnv;
  readonly gates: GatePort;
  /** The agents; by default the configured providers, each run under its own circuit breaker. */
  readonly runners?: CycleRunners;
}

type CycleEntryResult =
  | { readonly kind: 'cycle'; readonly outcome: CycleOutcome }
  | { readonly kind: 'loop'; readonly result: CycleLoopResult };

export interface CycleRequest extends CycleRun {
  readonly root: string;
  readonly loop: boolean;
  readonly cycleId?: string;
  /** End a pause first (`--resume`), with the human's verdict on a paused verification (yes or no). */
  readonly resume: {
    readonly verdict?: string;
    readonly reason?: string;
    /** The human's answer to the implementer's question (CYCLE_NEEDS_INPUT). */
    readonly answer?: string;
  } | null;
  /** Sections given instead of the config's (tests). */
  readonly given?: GivenSections;
}

export type CycleCommandOutcome =
  /** The config's cycle sections are unusable, or the sandbox is missing: nothing ran. */
  | { readonly kind: 'refused'; readonly detail: string; readonly fix?: string }
  | { readonly kind: 'resume_refused'; readonly detail: string }
  /** `--resume` alone: the pause is over, no cycle ran. */
  | { readonly kind: 'resumed'; readonly phase: string }
  | { readonly kind: 'cycle'; readonly outcome: CycleOutcome; readonly interrupted: boolean }
  | { readonly kind: 'loop'; readonly result: CycleLoopResult };

const END_TEXT: Record<LoopEnd, string> = {
  done: 'DONE',
  needs_human: 'a human is needed (relais status shows why)',
  refused: 'a cycle was refused',
  failures: 'too many CYCLE_FAIL in a row (cycle.max_consecutive_failures)',
  max_cycles: 'cycle.max_cycles_per_loop reached',
  interrupted: 'interrupted',
};

export async function cycleEntry(request: CycleRequest): Promise<CycleCommandOutcome> {
  const loaded = await loadCycleSetup(request.root, request.given, request.env);
  if (!loaded.ok) return { kind: 'refused', detail: loaded.detail, fix: loaded.fix };
  if (request.resume) {
    const { verdict, reason, answer } = request.resume;
    const resumed = await resumeCycle(request.root, loaded.setup.config.workspace_dir, {
      verdict: verdict
        ? { answer: verdict.toLowerCase() === 'yes' ? 'YES' : 'NO', reason: reason ?? 'judged by a human' }
        : undefined,
      answer,
      env: request.env,
    });
    if (!resumed.ok) return { kind: 'resume_refused', detail: resumed.detail };
    if (!request.loop) return { kind: 'resumed', phase: resumed.phase };
    request.bus.emit({ type: 'log', level: 'info', message: `Resumed: phase ${resumed.phase}` });
  }
  const ran = await runCycleEntry(loaded.setup, request, { loop: request.loop, cycleId: request.cycleId });
  if (ran.kind === 'cycle') return { ...ran, interrupted: request.signal.aborted };
  request.bus.emit({
    type: 'log',
    level: 'info',
    message: `Cycle loop ended after ${ran.result.cycles} cycle(s): ${END_TEXT[ran.result.end]}`,
  });
  return ran;
}

async function runCycleEntry(
  setup: CycleSetup,
  run: CycleRun,
  mode: { readonly loop: boolean; readonly cycleId?: string },
): Promise<CycleEntryResult> {
  warnIfSandboxOff(setup.sandbox, run.bus);
  const options = {
    root: setup.root,
    config: setup.config,
    policy: setup.policy,
    agents: setup.agents,
    runners:
      run.runners ??
      supervisedCycleRunners(
        cycleRunners(setup.agents, setup.config, setup.codexCli, run.env, setup.root, setup.sandbox),
        setup.config,
        run.bus,
        realClock,
      ),
    bus: run.bus,
    signal: run.signal,
    env: run.env,
    gates: run.gates,
    sandbox: setup.sandbox,
  };
  if (mode.loop) return { kind: 'loop', result: await runCycleLoop(options) };
  return { kind: 'cycle', outcome: await runCycle({ ...options, cycleId: mode.cycleId }) };
}

function parseSections(
  raw: GivenSections,
): { ok: true; sections: CycleSections } | { ok: false; detail: string } {
  const policy = cyclePolicySchema.safeParse(raw.policy);
  if (!policy.success) return { ok: false, detail: `cycle: ${policy.error.message}` };
  // The config's `agents` holds every role; the cycle reads its three.
  const all = (raw.agents ?? {}) as Record<string, unknown>;
  const agents = cycleAgentsSchema.safeParse({
    planner: all.planner,
    implementer: all.implementer,
    verifier: all.verifier,
  });
  if (!agents.success) return { ok: false, detail: `agents: ${agents.error.message}` };
  const codexCli = codexCliSchema.safeParse(raw.codexCli);
  if (!codexCli.success) return { ok: false, detail: `codex_cli: ${codexCli.error.message}` };
  return { ok: true, sections: { policy: policy.data, agents: agents.data, codexCli: codexCli.data } };
}
