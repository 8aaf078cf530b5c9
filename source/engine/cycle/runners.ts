import type { RelaisConfig } from '../protocol/config.js';
import type { CodexCli, CycleAgents } from '../protocol/cycle-policy.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { runnerForProvider } from '../session/index.js';
import type { CycleRunners } from './context.js';

/**
 * The real agent CLIs for each cycle role, from `cycle.agents.<role>.provider`, built by the
 * engine's one runner factory (`codexCli` may differ from the config's when a caller gives its own).
 */
export function cycleRunners(
  agents: CycleAgents,
  config: RelaisConfig,
  codexCli: CodexCli,
  env: NodeJS.ProcessEnv,
  root: string,
  sandbox: Sandbox,
): CycleRunners {
  const withCodex: RelaisConfig = { ...config, codex_cli: codexCli };
  const where = { env, root, sandbox };
  return {
    planner: runnerForProvider(agents.planner.provider, withCodex, where),
    implementer: runnerForProvider(agents.implementer.provider, withCodex, where),
    verifier: runnerForProvider(agents.verifier.provider, withCodex, where),
  };
}
