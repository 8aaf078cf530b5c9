import type { AgentRunner } from '../agents/agent-run.js';
import { claudeRunner } from '../agents/claude-code/run-claude.js';
import { codexRunner } from '../agents/codex/run-codex.js';
import type { RelaisConfig } from '../protocol/config.js';
import type { CodexCli, CycleAgents, Provider } from '../protocol/cycle-policy.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { CycleRunners } from './context.js';

/** The real agent CLIs for each role, from the config (`agents.<role>.provider`). */
export function cycleRunners(
  agents: CycleAgents,
  config: RelaisConfig,
  codexCli: CodexCli,
  env: NodeJS.ProcessEnv,
  sandbox: Sandbox,
): CycleRunners {
  const make = (provider: Provider): AgentRunner =>
    provider === 'claude'
      ? claudeRunner({
          command: config.claude_code_cli.command,
          extraEnv: config.claude_code_cli.extra_env,
          env,
          sandbox,
        })
      : codexRunner({
          command: codexCli.command,
          configOverrides: codexCli.config_overrides,
          extraEnv: codexCli.extra_env,
          env,
          sandbox,
        });
  return {
    planner: make(agents.planner.provider),
    implementer: make(agents.implementer.provider),
    verifier: make(agents.verifier.provider),
  };
}
