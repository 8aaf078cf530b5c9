import type { AgentRequest } from '../agent-run.js';

/**
 * Claude Code flags as the CLI really behaves (docs/ARCHITECTURE.md, checked against claude 2.1.x):
 * `--tools` restricts the tool set (`--allowedTools` only pre-approves), "" means no tools at all;
 * the prompt goes through stdin because a positional prompt after `--tools` is read as a tool name.
 */
export function claudeArgs(request: AgentRequest, settings?: string): string[] {
  // Every call streams its lines, the answer-only ones too: with `--output-format json` Claude Code
  // prints nothing at all while it retries a 429 (checked with 2.1.330), so a call its timeout
  // ended could not be told apart from a hung one (issue 15). Its last line is the same result.
  const args = [
    '-p',
    '--output-format',
    'stream-json',
    '--verbose',
    '--max-turns',
    String(request.maxTurns),
    '--no-session-persistence',
    '--permission-mode',
    request.permissionMode,
    '--model',
    request.model,
    '--tools',
    request.tools.join(','),
    '--max-budget-usd',
    String(request.maxBudgetUsd),
  ];
  const preApproved = request.allowedTools ?? request.tools;
  if (preApproved.length > 0) args.push('--allowedTools', preApproved.join(','));
  // The run's own settings (the scope hook): added to the user's, never replacing them.
  if (settings !== undefined) args.push('--settings', settings);
  if (request.fallbackModel && request.fallbackModel !== request.model)
    args.push('--fallback-model', request.fallbackModel);
  // The orchestrator, the planner and the mapper answer JSON with only our system prompt; the builder keeps
  // Claude Code's (tool usage) plus ours.
  args.push(
    request.role === 'orchestrator' || request.role === 'planner' || request.role === 'mapper'
      ? '--system-prompt'
      : '--append-system-prompt',
    request.systemPrompt,
  );
  return args;
}
