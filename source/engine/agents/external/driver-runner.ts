import { rm, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { EngineBus } from '../../events.js';
import { agentSandbox, type Sandbox } from '../../sandbox/sandbox.js';
import { describeEnd } from '../../supervise/run-process.js';
import {
  type AgentOutcome,
  type AgentRequest,
  type AgentRunner,
  sandboxForCwd,
  writableGlobsOf,
} from '../agent-run.js';
import { resolveCommand } from '../claude-code/run-claude.js';
import { type Driver, runDriver } from './run-driver.js';

/**
 * The external driver (seed 001 PR5) as an agent of any role (`agents.<role>.provider:
 * "external"`): the same argv and files as the "cursor" builder mode, plus the role's prompt on
 * stdin (system prompt, a blank line, user prompt) and RELAIS_AGENT_ROLE. Its answer is what it
 * writes to the output file; it reports no cost. A failure is a value, as with every adapter.
 */

export interface DriverRunnerSettings {
  readonly driver: Driver;
  /** The runner-owned task file (TASK.json) its `{{TASK_FILE}}` names. */
  readonly taskFile: string;
  readonly env: NodeJS.ProcessEnv;
  /** The run's OS sandbox: the driver runs inside it, its output file bound writable (issue 14). */
  readonly sandbox: Sandbox;
}

export function driverRunner(settings: DriverRunnerSettings): AgentRunner {
  return {
    async run(request: AgentRequest, bus: EngineBus): Promise<AgentOutcome> {
      const outputFile = resolve(request.cwd, settings.driver.output_file);
      // An answer left by an earlier run must never pass for this one's.
      await rm(outputFile, { force: true });
      // In a sandbox the workspace is read-only: the output file is made (empty, ours) and bound
      // writable on its own; runDriver reads an empty file as unwritten.
      if (settings.sandbox.kind === 'bwrap') await writeFile(outputFile, '', { mode: 0o600, flag: 'wx' });
      const run = await runDriver({
        driver: settings.driver,
        command: resolveCommand(settings.driver.command, request.cwd),
        root: request.cwd,
        taskFile: settings.taskFile,
        outputFile,
        env: settings.env,
        bus,
        signal: request.signal,
        remainingMs: request.timeoutMs,
        onSpawn: request.onSpawn,
        onOutputLine: request.onOutputLine,
        role: request.role,
        stdin: `${request.systemPrompt}\n\n${request.userPrompt}`,
        model: request.model,
        sandbox: agentSandbox(
          sandboxForCwd(settings.sandbox, request.cwd),
          writableGlobsOf(request),
          [outputFile],
          request.role,
        ),
      });
      const { process } = run;
      const ended = process.spawnError || process.aborted || process.timedOut || process.exitCode !== 0;
      const failure = ended
        ? `external driver ${describeEnd(process)}`
        : run.output.ok
          ? null
          : `the driver wrote no usable ${settings.driver.output_file} (${run.output.reason})`;
      return {
        text: failure === null && run.output.ok ? run.output.text : null,
        failure,
        costUsd: 0,
        costReported: true,
        errorText: failure ? process.stderrTail.trim().slice(-2000) || null : null,
        apiErrorStatus: null,
        permissionDenials: [],
        numTurns: null,
        process,
      };
    },
  };
}
