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
import { type CycleLoopResult, runCycleLoop } from './loop.js';
import { type CycleOutcome, runCycle } from './run-cycle.js';
import { cycleRunners } from './runners.js';
import { supervisedCycleRunners } from './supervision.js';

/**
 * `relais cycle`'s entry (seed 003): the config's cycle sections (`cycle`, its roles in
 * `cycle.agents`, and `codex_cli`, whose defaults are the seed's; a caller such as a test may
 * give its own), then one cycle or a loop of them with the configured agents under the breaker.
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

export type CycleEntryResult =
  | { readonly kind: 'cycle'; readonly outcome: CycleOutcome }
  | { readonly kind: 'loop'; readonly result: CycleLoopResult };

export async function runCycleEntry(
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
