import { type AgentRunner, prestartThrough } from '../agents/agent-run.js';
import { claudeRunner } from '../agents/claude-code/run-claude.js';
import { codexRunner } from '../agents/codex/run-codex.js';
import { driverRunner } from '../agents/external/driver-runner.js';
import { transcribedRunner, transcriptsDir } from '../agents/transcripts.js';
import type { AgentRole } from '../events.js';
import type { AgentProvider, RelaisConfig } from '../protocol/config.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { workspacePaths } from '../workspace/paths.js';

/**
 * The one place agent runners are built (docs/ARCHITECTURE.md: any role can use any provider in any engine).
 * A role's provider comes from `agents.<role>.provider`; the cycle's roles name theirs in
 * `cycle.agents` and call `runnerForProvider` directly. The task-carried patch of seed 001 PR4 is
 * not an agent: the tick applies it itself (tick/build.ts), so it has no runner here.
 */

export interface RunnerEnvironment {
  readonly env: NodeJS.ProcessEnv;
  /** The repository root: the external driver's task file lives in its workspace. */
  readonly root: string;
  /** The run's OS sandbox: every agent process runs inside it (issue 14). */
  readonly sandbox: Sandbox;
}

export function runnerForProvider(
  provider: AgentProvider,
  config: RelaisConfig,
  where: RunnerEnvironment,
): AgentRunner {
  const runner = providerRunner(provider, config, where);
  // Every run leaves its transcript in history (issue 16 item 11: the app reads past runs in full).
  if (!config.history.enabled) return runner;
  return transcribedRunner(
    runner,
    transcriptsDir(workspacePaths(where.root, config.workspace_dir).historyDir),
  );
}

function providerRunner(
  provider: AgentProvider,
  config: RelaisConfig,
  { env, root, sandbox }: RunnerEnvironment,
): AgentRunner {
  switch (provider) {
    case 'claude':
      return claudeRunner({
        command: config.claude_code_cli.command,
        extraEnv: config.claude_code_cli.extra_env,
        env,
        sandbox,
      });
    case 'codex':
      return codexRunner({
        command: config.codex_cli.command,
        configOverrides: config.codex_cli.config_overrides,
        extraEnv: config.codex_cli.extra_env,
        env,
        sandbox,
      });
    case 'external': {
      const driver = config.builder.cursor;
      // The config schema refuses provider "external" without a driver; a failure stays a value.
      if (!driver) return missingDriver;
      return driverRunner({
        driver,
        taskFile: workspacePaths(root, config.workspace_dir).task,
        env,
        sandbox,
      });
    }
  }
}

/** The runner configured for one role. */
export function agentRunnerFor(config: RelaisConfig, role: AgentRole, where: RunnerEnvironment): AgentRunner {
  return runnerForProvider(config.agents[role].provider, config, where);
}

/**
 * One runner for a flow whose steps play several roles (a tick's orchestrator and builder, a
 * workflow's spec, dev and QA agents): each request goes to its own role's provider.
 */
export function roleRoutedRunner(config: RelaisConfig, where: RunnerEnvironment): AgentRunner {
  const byRole = new Map<AgentRole, AgentRunner>();
  const forRole = (role: AgentRole) => {
    let runner = byRole.get(role);
    if (!runner) {
      runner = agentRunnerFor(config, role, where);
      byRole.set(role, runner);
    }
    return runner;
  };
  return {
    run: (request, bus) => forRole(request.role).run(request, bus),
    prestart: prestartThrough((request) => forRole(request.role)),
  };
}

const missingDriver: AgentRunner = {
  async run() {
    const failure = 'provider "external" needs a builder.cursor driver in relais.config.json';
    return {
      text: null,
      failure,
      costUsd: 0,
      costReported: true,
      errorText: failure,
      apiErrorStatus: null,
      permissionDenials: [],
      numTurns: null,
      process: {
        exitCode: null,
        signal: null,
        spawnError: 'ENOENT',
        timedOut: false,
        aborted: false,
        stdoutTail: '',
        stderrTail: '',
        stdoutBytes: 0,
        stderrBytes: 0,
        durationMs: 0,
      },
    };
  },
};
