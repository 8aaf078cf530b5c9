import { findExecutable } from '../agents/find-executable.js';
import type { AgentRole } from '../events.js';
import type { AgentProvider, RelaisConfig } from '../protocol/config.js';

/** Where a provider's program is configured, and how a user gets it. */
export function agentCommandSetting(
  config: RelaisConfig,
  provider: AgentProvider,
): { setting: string; command: string; install: string } | null {
  switch (provider) {
    case 'claude':
      return {
        setting: 'claude_code_cli.command',
        command: config.claude_code_cli.command,
        install: 'npm install -g @anthropic-ai/claude-code',
      };
    case 'codex':
      return {
        setting: 'codex_cli.command',
        command: config.codex_cli.command,
        install: 'npm install -g @openai/codex',
      };
    case 'external':
      return config.builder.cursor
        ? {
            setting: 'builder.cursor.command',
            command: config.builder.cursor.command,
            install: 'install the driver',
          }
        : null;
  }
}

/** Why a role's agent cannot start (its program is not found), or null when it can. */
export async function missingAgentCommand(
  config: RelaisConfig,
  role: AgentRole,
  env: NodeJS.ProcessEnv,
  root: string,
): Promise<string | null> {
  const { provider } = config.agents[role];
  const where = agentCommandSetting(config, provider);
  if (!where || (await findExecutable(where.command, env, root))) return null;
  return `${where.setting} "${where.command}" (agents.${role}.provider "${provider}") was not found (PATH or path)`;
}
