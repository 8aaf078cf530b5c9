import { expect } from 'vitest';
import type { AgentRunner } from '../../source/engine/agents/agent-run.js';
import { claudeRunner } from '../../source/engine/agents/claude-code/run-claude.js';
import type { RelaisConfig } from '../../source/engine/protocol/config.js';
import { resolveSandbox } from '../../source/engine/sandbox/sandbox.js';
import { FAKE_CLAUDE } from './project.js';

/**
 * The fake Claude Code as a cycle implementer, in the real OS sandbox the config resolves to
 * (asserted to be bwrap), playing `scenarioPath`: a test of the sandbox must not pass because none ran.
 */
export async function sandboxedFakeClaude(
  config: RelaisConfig,
  root: string,
  scenarioPath: string,
): Promise<AgentRunner> {
  const sandbox = await resolveSandbox(config, root, process.env);
  expect(sandbox.kind).toBe('bwrap');
  return claudeRunner({
    command: FAKE_CLAUDE,
    extraEnv: {},
    env: { ...process.env, RELAIS_FAKE_SCENARIO: scenarioPath },
    sandbox,
  });
}
