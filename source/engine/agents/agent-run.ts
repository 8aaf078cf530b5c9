import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentRole, EngineBus } from '../events.js';
import type { SandboxPolicy } from '../sandbox/policy.js';
import { agentSandbox, type Sandbox, sandboxForTree } from '../sandbox/sandbox.js';
import type { ProcessResult } from '../supervise/run-process.js';
import type { WriteFence } from './claude-code/scope-hook.js';

/**
 * One interface for every agent CLI (docs/ARCHITECTURE.md `agents/`): the tick asks for a run and gets back
 * the final answer text, the cost the CLI reported, and how the process ended. Adapters never
 * throw; a failure is a value.
 */

export interface AgentRequest {
  readonly role: AgentRole;
  readonly attempt: number;
  readonly systemPrompt: string;
  readonly userPrompt: string;
  readonly model: string;
  readonly fallbackModel: string | null;
  readonly maxTurns: number;
  readonly maxBudgetUsd: number;
  /** Built-in tools the agent may use; empty means none at all. */
  readonly tools: readonly string[];
  readonly permissionMode: 'plan' | 'bypassPermissions' | 'acceptEdits';
  /** Pre-approved tool calls (`--allowedTools`); the whole tool set when absent. */
  readonly allowedTools?: readonly string[];
  /**
   * Whether its text is shown as it comes (a builder at work) or is only its answer (an orchestrator's
   * task, a block): the lines are read as they come either way.
   */
  readonly streaming: boolean;
  readonly cwd: string;
  /**
   * Where the agent may write, as the task's allowed globs: the sandbox makes their folders
   * writable (issue 14). Absent, or a planning request: nothing in the repository.
   */
  readonly writableGlobs?: readonly string[];
  /**
   * The task's effective scope, for agents that can refuse a write themselves before it happens
   * (Claude Code's PreToolUse hook, issue 14). Absent: no such refusal (planning, workflows).
   */
  readonly writeFence?: WriteFence;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  /** The agent's process group id, as soon as it runs (crash recovery records it). */
  readonly onSpawn?: (pgid: number) => void;
  /**
   * What the agent says, as readable lines (its text, one line per tool call, tool errors): the
   * circuit breaker reads repeated errors and the test command from these.
   */
  readonly onOutputLine?: (line: string) => void;
  /**
   * Every chunk the process writes on stdout or stderr, by size: the output-size cap counts what
   * the agent really prints (JSON envelopes, tool results, junk, lines too long to read), not
   * only what could be read as lines.
   */
  readonly onOutputBytes?: (bytes: number) => void;
  /** Any sign of life on stdout or stderr (an API retry line too): liveness, not progress. */
  readonly onActivity?: () => void;
  /**
   * The CLI has printed its final answer, and may still be exiting: a hint to start what comes
   * next (issue 17). Only a hint: the call's outcome, its exit included, is still `run`'s to give.
   * An adapter that cannot tell never calls it.
   */
  readonly onAnswer?: (text: string) => void;
}

export interface AgentOutcome {
  /** The agent's final answer, when the CLI produced one. */
  readonly text: string | null;
  /** Why there is no usable answer (process error, timeout, API error, missing result), else null. */
  readonly failure: string | null;
  readonly costUsd: number;
  /** False when the CLI died before reporting what it cost (then the reserved maximum stands). */
  readonly costReported: boolean;
  /** What the CLI said when it failed (an error result, or the end of stderr): usage limits are read here. */
  readonly errorText: string | null;
  readonly apiErrorStatus: number | null;
  /** Tool calls the CLI refused, as "Tool target" lines (a permission the human must grant). */
  readonly permissionDenials: string[];
  readonly numTurns: number | null;
  readonly process: ProcessResult;
}

export interface AgentRunner {
  run(request: AgentRequest, bus: EngineBus): Promise<AgentOutcome>;
  /**
   * Starts the process `run(request)` would start, before the runner has its prompt (issue 17: an
   * agent CLI loads itself while the runner still prepares the call). A later `run` whose process
   * would be the same (same program, argv, folder, environment and sandbox: the prompt goes to
   * stdin) adopts it and only then writes the prompt; nothing else ever reaches it, and the
   * handle's `discard` kills it if no call did. Nothing is counted, shown or paid until `run`. A
   * hint: a runner may start nothing (null).
   */
  prestart?(request: AgentRequest): Promise<PrestartedCall | null>;
}

/** A process started ahead of its call (`AgentRunner.prestart`). */
export interface PrestartedCall {
  /** Kills it at once if no call adopted it, and waits until all of it is gone. */
  discard(): Promise<void>;
}

/** A wrapping runner's `prestart`: the inner runner's own, which may have none (null: nothing started). */
export function prestartThrough(
  inner: (request: AgentRequest) => AgentRunner,
): (request: AgentRequest) => Promise<PrestartedCall | null> {
  return async (request) => (await inner(request).prestart?.(request)) ?? null;
}

/** What an adapter tells its supervisor of each raw chunk the agent process writes. */
export function rawOutput(request: AgentRequest, data: Buffer): void {
  request.onActivity?.();
  request.onOutputBytes?.(data.length);
}

/**
 * The sandbox policy of one agent run: the paths its work may write, nothing in the repository
 * when it only plans or names none; the network its role is given.
 */
export function requestSandbox(sandbox: Sandbox, request: AgentRequest): SandboxPolicy | undefined {
  return agentSandbox(sandboxForCwd(sandbox, request.cwd), writableGlobsOf(request), [], request.role);
}

/** What an agent run may write in the repository: nothing when it plans or names nothing. */
export function writableGlobsOf(request: AgentRequest): readonly string[] {
  return request.permissionMode === 'plan' ? [] : (request.writableGlobs ?? []);
}

/**
 * An agent working in another tree of the repository (a parallel lane's worktree: a folder with
 * its own `.git`) is fenced in that tree, not the main one.
 */
export function sandboxForCwd(sandbox: Sandbox, cwd: string): Sandbox {
  return existsSync(join(cwd, '.git')) ? sandboxForTree(sandbox, cwd) : sandbox;
}
