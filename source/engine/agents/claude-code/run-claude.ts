import { isAbsolute, resolve } from 'node:path';
import type { EngineBus, OutputKind } from '../../events.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import { describeEnd, prestartProcess, runProcess, type SpawnSpec } from '../../supervise/run-process.js';
import { oneLine } from '../../workspace/printable.js';
import {
  type AgentOutcome,
  type AgentRequest,
  type AgentRunner,
  type PrestartedCall,
  requestSandbox,
} from '../agent-run.js';
import { claudeArgs } from './args.js';
import { StreamJsonOutputBytes } from './output-bytes.js';
import { type InstalledHook, installScopeHook, type WriteFence } from './scope-hook.js';
import { type ResultWrapper, readStreamLine, type StreamItem } from './stream.js';

/** The Claude Code adapter: real `claude` binary, argv only, output parsed line by line. */

export interface ClaudeCliSettings {
  /** Program name (looked up on PATH) or a path (relative paths are taken from the repo root). */
  readonly command: string;
  readonly extraEnv: Readonly<Record<string, string>>;
  readonly env: NodeJS.ProcessEnv;
  /** The run's OS sandbox: every process of this adapter runs inside it (issue 14). */
  readonly sandbox: Sandbox;
}

const MAX_RESULT_LINE = 2 * 1024 * 1024;
const MAX_EVENT_TEXT = 400;

export function resolveCommand(command: string, root: string): string {
  return command.includes('/') && !isAbsolute(command) ? resolve(root, command) : command;
}

/** The process one request runs: the prompt aside (it goes to stdin), all of it is here. */
function claudeProcess(settings: ClaudeCliSettings, request: AgentRequest, hookSettings?: string): SpawnSpec {
  return {
    cmd: resolveCommand(settings.command, request.cwd),
    args: claudeArgs(request, hookSettings),
    cwd: request.cwd,
    env: { ...settings.env, ...settings.extraEnv },
    sandbox: requestSandbox(settings.sandbox, request),
  };
}

/**
 * Scope hooks installed for a prestarted call, by fence and folder: the call that adopts the
 * process takes the same files, so its argv (which names them) is the one the process was started
 * with. Whichever ends last of the call and the prestart's handle removes them.
 */
const hooksAhead = new Map<string, InstalledHook>();

const hookKey = (fence: WriteFence, cwd: string) => JSON.stringify([fence, cwd]);

/** The hook a prestart installed for this fence (it is the caller's from now on), or a new one. */
function takeScopeHook(fence: WriteFence, cwd: string): InstalledHook {
  const key = hookKey(fence, cwd);
  const ahead = hooksAhead.get(key);
  if (ahead) {
    hooksAhead.delete(key);
    return ahead;
  }
  return installScopeHook(fence, cwd);
}

async function prestartFenced(
  settings: ClaudeCliSettings,
  request: AgentRequest,
  fence: WriteFence,
): Promise<PrestartedCall | null> {
  const key = hookKey(fence, request.cwd);
  if (hooksAhead.has(key)) return null;
  const hook = installScopeHook(fence, request.cwd);
  hooksAhead.set(key, hook);
  const dropHook = () => {
    // Not taken by a call: nobody else will remove it.
    if (hooksAhead.get(key) !== hook) return;
    hooksAhead.delete(key);
    hook.dispose();
  };
  const started = await prestartProcess(claudeProcess(settings, request, hook.settings)).catch(() => null);
  if (started === null) dropHook();
  return started === null
    ? null
    : {
        discard: async () => {
          try {
            await started.discard();
          } finally {
            dropHook();
          }
        },
      };
}

export function claudeRunner(settings: ClaudeCliSettings): AgentRunner {
  return {
    async prestart(request: AgentRequest): Promise<PrestartedCall | null> {
      if (request.writeFence) return prestartFenced(settings, request, request.writeFence);
      return prestartProcess(claudeProcess(settings, request));
    },
    async run(request: AgentRequest, bus: EngineBus): Promise<AgentOutcome> {
      const command = resolveCommand(settings.command, request.cwd);
      bus.emit({
        type: 'agent.started',
        role: request.role,
        attempt: request.attempt,
        command,
        model: request.model,
      });
      let wrapper: ResultWrapper | null = null;
      let lastRetry: ApiRetry | null = null;
      const outputBytes = new StreamJsonOutputBytes(MAX_RESULT_LINE, (bytes) =>
        request.onOutputBytes?.(bytes),
      );
      const hook = request.writeFence ? takeScopeHook(request.writeFence, request.cwd) : null;
      const process = await runProcess({
        ...claudeProcess(settings, request, hook?.settings),
        stdin: request.userPrompt,
        timeoutMs: request.timeoutMs,
        signal: request.signal,
        onSpawn: request.onSpawn,
        maxLineBytes: MAX_RESULT_LINE,
        onOutput: (stream, data) => {
          request.onActivity?.();
          if (stream === 'stderr') outputBytes.stderr(data);
          else outputBytes.stdoutChunk(data);
        },
        onStdoutLine: (line, truncated) => {
          outputBytes.stdoutLine(line, truncated);
          if (truncated) return; // a cut line is not valid JSON; never half-parse it
          for (const item of readStreamLine(line)) {
            if (item.kind === 'result') {
              wrapper = item.wrapper;
              if (!wrapper.isError && typeof wrapper.result === 'string') request.onAnswer?.(wrapper.result);
            } else if (item.kind === 'retry') lastRetry = item;
            showItem(bus, request, item);
          }
        },
      });
      hook?.dispose();
      const outcome = interpret(process, wrapper, lastRetry);
      bus.emit({
        type: 'agent.finished',
        role: request.role,
        ok: outcome.failure === null,
        exit_code: process.exitCode,
        cost_usd: outcome.costUsd,
        duration_ms: process.durationMs,
        summary: outcome.failure ?? 'answered',
      });
      return outcome;
    },
  };
}

/** What one stream item shows on the bus (and feeds the supervisor through `said`). */
function showItem(bus: EngineBus, request: AgentRequest, item: StreamItem): void {
  switch (item.kind) {
    case 'result':
      return;
    case 'text':
      // An answer-only call's text is its answer (a task JSON, a block), not output to show.
      if (request.streaming) emitText(bus, request, item.text, 'text');
      else said(request, item.text);
      return;
    case 'tool': {
      const target = oneLine(item.target, MAX_EVENT_TEXT);
      said(request, `${item.tool} ${target}`);
      bus.emit({ type: 'agent.tool', role: request.role, tool: item.tool, target });
      return;
    }
    case 'tool_error':
      emitText(bus, request, `tool error: ${item.text}`, 'error');
      return;
    case 'retry':
      bus.emit({
        type: 'agent.retry',
        role: request.role,
        attempt: item.attempt,
        max_retries: item.maxRetries,
        error: item.error,
        retry_delay_ms: item.delayMs,
      });
  }
}

function emitText(bus: EngineBus, request: AgentRequest, text: string, kind: OutputKind): void {
  const lines = text.split('\n').filter((l) => l.trim().length > 0);
  for (const line of lines) said(request, line);
  for (const line of lines.slice(0, 50))
    bus.emit({ type: 'agent.output', role: request.role, text: oneLine(line, MAX_EVENT_TEXT), kind });
}

/** Every readable line goes to the supervisor, whatever the bus shows of it. */
function said(request: AgentRequest, line: string): void {
  request.onOutputLine?.(line);
}

type ApiRetry = Extract<StreamItem, { kind: 'retry' }>;

/**
 * A CLI that was still retrying a 429 when the runner's own timeout (or the caller) ended it was
 * rate-limited, not broken (issue 15): its end reads as a rate limit, so the step waits and
 * runs again instead of counting a failure.
 */
function rateLimitedUntilKilled(process: AgentOutcome['process'], lastRetry: ApiRetry | null): boolean {
  if (!lastRetry || !(process.timedOut || process.exitCode !== 0)) return false;
  return /rate[ _-]?limit|\b429\b|overloaded|\b529\b/i.test(lastRetry.error);
}

function interpret(
  process: AgentOutcome['process'],
  wrapper: ResultWrapper | null,
  lastRetry: ApiRetry | null,
): AgentOutcome {
  const limited = wrapper === null && !process.aborted && rateLimitedUntilKilled(process, lastRetry);
  const base = {
    process,
    costUsd: wrapper?.costUsd ?? 0,
    costReported: wrapper !== null,
    numTurns: wrapper?.numTurns ?? null,
    errorText: limited
      ? `rate limit: the API kept answering ${lastRetry?.error} and claude was still retrying (attempt ${lastRetry?.attempt}/${lastRetry?.maxRetries}) when it was stopped`
      : wrapper?.isError && typeof wrapper.result === 'string'
        ? wrapper.result
        : process.stderrTail.trim().slice(-2000) || null,
    apiErrorStatus: limited ? 429 : (wrapper?.apiErrorStatus ?? null),
    permissionDenials: wrapper?.permissionDenials ?? [],
  };
  const failure = failureOf(process, wrapper);
  if (failure) return { ...base, text: null, failure };
  return { ...base, text: (wrapper as ResultWrapper).result as string, failure: null };
}

function failureOf(process: AgentOutcome['process'], wrapper: ResultWrapper | null): string | null {
  if (process.spawnError === 'ENOENT')
    return 'the claude command was not found (is Claude Code installed and on PATH?)';
  if (process.spawnError || process.timedOut || process.aborted) return `claude ${describeEnd(process)}`;
  const stderr = oneLine(process.stderrTail.trim().split('\n').slice(-3).join(' '), 300);
  if (!wrapper) {
    // Claude Code refuses bypassPermissions as root; say how to get past it, not just that it failed.
    const rootHint = /root\/sudo/.test(stderr)
      ? ' (run relais as a normal user, or set IS_SANDBOX=1 inside a real sandbox)'
      : '';
    return `claude ${describeEnd(process)} without a result object${stderr ? `: ${stderr}` : ''}${rootHint}`;
  }
  if (wrapper.isError) {
    const status = wrapper.apiErrorStatus ? ` (API status ${wrapper.apiErrorStatus})` : '';
    const said =
      typeof wrapper.result === 'string' ? oneLine(wrapper.result, 300) : (wrapper.subtype ?? 'error');
    return `claude reported an error${status}: ${said}`;
  }
  if (typeof wrapper.result !== 'string')
    return `claude's result is missing or not a string (subtype ${wrapper.subtype ?? 'none'})`;
  if (process.exitCode !== 0)
    return `claude ${describeEnd(process)} after answering${stderr ? `: ${stderr}` : ''}`;
  return null;
}
