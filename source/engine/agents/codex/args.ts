import type { AgentRequest } from '../agent-run.js';

/**
 * `codex exec` flags as codex-cli 0.169 really accepts them (docs/ARCHITECTURE.md): `--json` for JSONL events,
 * `--sandbox` (seed 003's `--approval-mode full-auto` does not exist), `--skip-git-repo-check`,
 * `--ephemeral` (no session files), `-m`. The prompt goes through stdin (`-`), so no prompt is ever
 * read as a flag and no argv limit applies. A planning request (`permissionMode: 'plan'`) runs in
 * the read-only sandbox; an implementing one in workspace-write, where Codex keeps `.git`
 * read-only, so the agent cannot commit and the runner commits what it changed.
 */
export interface CodexArgOptions {
  /** `-c key=value` overrides from the config (a model provider, say), each one argv word. */
  readonly configOverrides: readonly string[];
  /**
   * Relais's own sandbox is around this run (issue 14). Then it is the fence (writable: the
   * task's paths and a scratch HOME; `.git/`, `relais/` and the rest read-only; its own PID
   * namespace) and Codex's bubblewrap, which cannot nest inside it, is not used:
   * `danger-full-access` inside the outer sandbox. Without it, Codex's own sandbox applies.
   */
  readonly outerSandbox?: boolean;
}

export function codexArgs(request: AgentRequest, options: CodexArgOptions): string[] {
  const args = [
    'exec',
    '--json',
    '--sandbox',
    codexSandboxMode(request, options),
    '--skip-git-repo-check',
    '--ephemeral',
    '--color',
    'never',
    '-m',
    request.model,
  ];
  // Seed 003 implement_task 2: a fixed, high reasoning effort for implementation.
  if (request.permissionMode !== 'plan') args.push('-c', 'model_reasoning_effort="high"');
  for (const override of options.configOverrides) args.push('-c', override);
  args.push('-');
  return args;
}

export function codexSandboxMode(
  request: AgentRequest,
  options: CodexArgOptions,
): 'read-only' | 'workspace-write' | 'danger-full-access' {
  if (options.outerSandbox) return 'danger-full-access';
  return request.permissionMode === 'plan' ? 'read-only' : 'workspace-write';
}

/** Codex has one prompt: the system part first, then the request. */
export function codexPrompt(request: AgentRequest): string {
  return request.systemPrompt.trim()
    ? `${request.systemPrompt.trim()}\n\n${request.userPrompt}`
    : request.userPrompt;
}
