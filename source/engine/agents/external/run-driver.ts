import type { AgentRole, EngineBus } from '../../events.js';
import type { RelaisConfig } from '../../protocol/config.js';
import type { SandboxPolicy } from '../../sandbox/policy.js';
import { describeEnd, type ProcessResult, runProcess } from '../../supervise/run-process.js';
import { oneLine } from '../../workspace/printable.js';
import { readUntrustedFile } from '../../workspace/safe-read.js';

/**
 * Seed 001 PR5, the external builder driver ("cursor" by name): any headless program. It gets
 * argv from the config (never a shell), TASK.json in, and writes its builder_result JSON to the
 * output file. Placeholders in args: {{TASK_FILE}}, {{OUTPUT_FILE}}, {{REPO_ROOT}}; the same
 * values are in RELAIS_TASK_FILE, RELAIS_OUTPUT_FILE, RELAIS_REPO_ROOT.
 */

/** A builder_result is a few kilobytes; anything bigger is not one. */
const MAX_RESULT_BYTES = 1024 * 1024;

export type Driver = NonNullable<RelaisConfig['builder']['cursor']>;

export interface DriverRun {
  readonly process: ProcessResult;
  /** The output file's text, or why it could not be used (missing, not a regular file, too big). */
  readonly output: { ok: true; text: string } | { ok: false; reason: string };
  /** The driver's own timeout ended it (as opposed to the tick deadline or a signal). */
  readonly timedOut: boolean;
}

export async function runDriver(input: {
  driver: Driver;
  command: string;
  root: string;
  taskFile: string;
  outputFile: string;
  env: NodeJS.ProcessEnv;
  bus: EngineBus;
  signal: AbortSignal;
  remainingMs: number;
  onSpawn?: (pgid: number) => void;
  /** The role it plays (the builder unless a config names it for another role). */
  role?: AgentRole;
  /** Written to its stdin (an agent role's prompt); without it stdin is /dev/null. */
  stdin?: string;
  model?: string;
  /** The builder's sandbox; its output file must be among the policy's writable files. */
  sandbox?: SandboxPolicy;
  /** Each line it prints, whole (the run's transcript keeps them). */
  onOutputLine?: (line: string) => void;
}): Promise<DriverRun> {
  const role = input.role ?? 'builder';
  const values: Record<string, string> = {
    TASK_FILE: input.taskFile,
    OUTPUT_FILE: input.outputFile,
    REPO_ROOT: input.root,
  };
  const args = input.driver.args.map((a) =>
    a.replace(/\{\{(TASK_FILE|OUTPUT_FILE|REPO_ROOT)\}\}/g, (_, name: string) => values[name] ?? ''),
  );
  const ownTimeout = input.driver.timeout_seconds * 1000;
  input.bus.emit({
    type: 'agent.started',
    role,
    attempt: 1,
    command: input.command,
    model: input.model ?? 'external driver',
  });
  const process = await runProcess({
    cmd: input.command,
    args,
    cwd: input.root,
    env: {
      ...input.env,
      RELAIS_TASK_FILE: input.taskFile,
      RELAIS_OUTPUT_FILE: input.outputFile,
      RELAIS_REPO_ROOT: input.root,
      RELAIS_AGENT_ROLE: role,
    },
    ...(input.stdin === undefined ? {} : { stdin: input.stdin }),
    timeoutMs: Math.min(ownTimeout, input.remainingMs),
    signal: input.signal,
    onSpawn: input.onSpawn,
    sandbox: input.sandbox,
    onStdoutLine: (line) => {
      if (line.trim()) input.onOutputLine?.(line);
      if (line.trim()) input.bus.emit({ type: 'agent.output', role, text: oneLine(line, 400), kind: 'text' });
    },
  });
  const raw = await readUntrustedFile(input.outputFile, MAX_RESULT_BYTES);
  // In a sandbox the runner made the file empty beforehand (a bind needs it): empty is unwritten.
  const read = raw.ok && raw.text === '' ? { ok: false as const, reason: 'missing' } : raw;
  input.bus.emit({
    type: 'agent.finished',
    role,
    ok: process.exitCode === 0,
    exit_code: process.exitCode,
    cost_usd: 0,
    duration_ms: process.durationMs,
    summary: describeEnd(process),
  });
  return { process, output: read, timedOut: process.timedOut && ownTimeout <= input.remainingMs };
}
