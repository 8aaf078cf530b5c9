import type { EngineBus, OutputKind } from '../../events.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import { describeEnd, runProcess } from '../../supervise/run-process.js';
import { oneLine } from '../../workspace/printable.js';
import {
  type AgentOutcome,
  type AgentRequest,
  type AgentRunner,
  rawOutput,
  requestSandbox,
} from '../agent-run.js';
import { resolveCommand } from '../claude-code/run-claude.js';
import { codexArgs, codexPrompt } from './args.js';
import { withCodexSandboxHelper } from './sandbox-helper.js';
import { type CodexItem, readCodexLine } from './stream.js';

/**
 * The Codex adapter: the real `codex exec --json` binary, argv only, the prompt on stdin, its JSONL
 * events turned into the same bus events as Claude Code's (agent.started / output / tool /
 * finished). Codex reports tokens, not dollars, so its cost is 0 and counted in calls. It waits
 * for an unreachable model forever ("Reconnecting..."): the request's timeout is what ends it.
 */

export interface CodexCliSettings {
  /** Program name (looked up on PATH) or a path (relative paths are taken from the repo root). */
  readonly command: string;
  readonly configOverrides: readonly string[];
  readonly extraEnv: Readonly<Record<string, string>>;
  readonly env: NodeJS.ProcessEnv;
  /** The run's OS sandbox: every process of this adapter runs inside it (issue 14). */
  readonly sandbox: Sandbox;
}

const MAX_EVENT_TEXT = 400;
const MAX_LINE = 4 * 1024 * 1024;

interface Seen {
  lastMessage: string | null;
  completed: boolean;
  failed: string | null;
  /** The last notice Codex showed (a reconnect, a 429 it is retrying). */
  lastWarning: string | null;
}

export function codexRunner(settings: CodexCliSettings): AgentRunner {
  return {
    async run(request: AgentRequest, bus: EngineBus): Promise<AgentOutcome> {
      const command = resolveCommand(settings.command, request.cwd);
      bus.emit({
        type: 'agent.started',
        role: request.role,
        attempt: request.attempt,
        command,
        model: request.model,
      });
      const seen: Seen = { lastMessage: null, completed: false, failed: null, lastWarning: null };
      const sandbox = requestSandbox(settings.sandbox, request);
      const env = { ...settings.env, ...settings.extraEnv };
      const helper = await withCodexSandboxHelper(command, env, request.cwd);
      const process = await runProcess({
        cmd: command,
        args: codexArgs(request, { ...settings, outerSandbox: sandbox !== undefined }),
        cwd: request.cwd,
        env: helper.env,
        stdin: codexPrompt(request),
        timeoutMs: request.timeoutMs,
        signal: request.signal,
        onSpawn: request.onSpawn,
        sandbox,
        maxLineBytes: MAX_LINE,
        onOutput: (_stream, data) => rawOutput(request, data),
        onStdoutLine: (line, truncated) => {
          if (truncated) return; // a cut line is not valid JSON; never half-parse it
          for (const item of readCodexLine(line)) show(item, seen, bus, request);
        },
      });
      helper.dispose();
      const failure = failureOf(process, seen);
      bus.emit({
        type: 'agent.finished',
        role: request.role,
        ok: failure === null,
        exit_code: process.exitCode,
        cost_usd: 0,
        duration_ms: process.durationMs,
        summary: failure ?? 'answered',
      });
      return {
        text: failure ? null : seen.lastMessage,
        failure,
        costUsd: 0,
        costReported: seen.completed,
        errorText:
          seen.failed ??
          limitedUntilKilled(process, seen) ??
          (process.stderrTail.trim().slice(-2000) || null),
        apiErrorStatus: limitedUntilKilled(process, seen) ? 429 : null,
        permissionDenials: [],
        numTurns: null,
        process,
      };
    },
  };
}

function show(item: CodexItem, seen: Seen, bus: EngineBus, request: AgentRequest): void {
  switch (item.kind) {
    case 'message':
      seen.lastMessage = item.text;
      emitText(bus, request, item.text, 'text');
      return;
    case 'command_started':
      tool(bus, request, 'exec_command', item.command);
      return;
    case 'command':
      if (item.exitCode !== 0)
        emitText(
          bus,
          request,
          `command exited ${item.exitCode ?? 'without a code'}: ${oneLine(item.output.trim(), 300)}`,
          'error',
        );
      else request.onOutputLine?.(`exec_command ${item.command}`);
      return;
    case 'file_change':
      for (const path of item.paths) tool(bus, request, 'file_change', path);
      return;
    case 'warning':
      seen.lastWarning = item.text;
      emitText(bus, request, item.text, 'error');
      return;
    case 'turn_completed':
      seen.completed = true;
      return;
    case 'turn_failed':
      seen.failed = item.message;
      emitText(bus, request, item.message, 'error');
      return;
    case 'thread':
      return;
  }
}

function tool(bus: EngineBus, request: AgentRequest, name: string, target: string): void {
  const shown = oneLine(target, MAX_EVENT_TEXT);
  said(request, `${name} ${shown}`);
  bus.emit({ type: 'agent.tool', role: request.role, tool: name, target: shown });
}

function emitText(bus: EngineBus, request: AgentRequest, text: string, kind: OutputKind): void {
  const lines = text.split('\n').filter((l) => l.trim().length > 0);
  for (const line of lines) said(request, line);
  for (const line of lines.slice(0, 50))
    bus.emit({ type: 'agent.output', role: request.role, text: oneLine(line, MAX_EVENT_TEXT), kind });
}

function said(request: AgentRequest, line: string): void {
  request.onOutputLine?.(line);
}

function failureOf(process: AgentOutcome['process'], seen: Seen): string | null {
  if (process.spawnError === 'ENOENT')
    return 'the codex command was not found (npm install -g @openai/codex, or set codex_cli.command)';
  if (process.spawnError || process.timedOut || process.aborted) return `codex ${describeEnd(process)}`;
  if (seen.failed) return `codex reported a failed turn: ${oneLine(seen.failed, 300)}`;
  const stderr = oneLine(stderrGist(process.stderrTail), 300);
  if (process.exitCode !== 0) return `codex ${describeEnd(process)}${stderr ? `: ${stderr}` : ''}`;
  if (!seen.completed) return `codex ended without completing its turn${stderr ? `: ${stderr}` : ''}`;
  if (seen.lastMessage === null) return 'codex completed its turn without a final message';
  return null;
}

/**
 * What Codex said when it failed: its `Error:` line when it printed one (a failure at start ends
 * with a stack backtrace of `<unknown>` frames, which says nothing), else its last lines.
 */
export function stderrGist(stderr: string): string {
  const lines = stderr.trim().split('\n');
  const error = lines.findLast((l) => /^Error: /.test(l));
  return error ?? lines.slice(-3).join(' ');
}

/**
 * Codex still retrying a 429 when the runner's timeout ended it was rate-limited, not broken
 * (issue 15): its last notice is the error text a usage-limit reader sees.
 */
function limitedUntilKilled(process: AgentOutcome['process'], seen: Seen): string | null {
  if (!process.timedOut || seen.completed || seen.lastWarning === null) return null;
  return /\b429\b|rate[ _-]?limit|too many requests|usage limit/i.test(seen.lastWarning)
    ? `rate limit: ${seen.lastWarning}`
    : null;
}
