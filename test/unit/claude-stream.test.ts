import { describe, expect, it } from 'vitest';
import { claudeArgs } from '../../source/engine/agents/claude-code/args.js';
import { readStreamLine } from '../../source/engine/agents/claude-code/stream.js';

describe('reading Claude Code output', () => {
  it('reads the result wrapper of both output formats', () => {
    const [item] = readStreamLine(
      JSON.stringify({
        type: 'result',
        subtype: 'success',
        is_error: false,
        result: '{}',
        total_cost_usd: 0.25,
        num_turns: 3,
        api_error_status: null,
      }),
    );
    expect(item).toEqual({
      kind: 'result',
      wrapper: {
        result: '{}',
        isError: false,
        subtype: 'success',
        costUsd: 0.25,
        numTurns: 3,
        apiErrorStatus: null,
        permissionDenials: [],
      },
    });
  });

  it('turns assistant blocks into text and one readable line per tool call', () => {
    const line = JSON.stringify({
      type: 'assistant',
      message: {
        content: [
          { type: 'text', text: 'Reading' },
          {
            type: 'tool_use',
            name: 'Edit',
            input: { file_path: '/r/src/a.ts', old_string: 'a', new_string: 'b' },
          },
          { type: 'tool_use', name: 'Bash', input: { command: 'npm test' } },
        ],
      },
    });
    expect(readStreamLine(line)).toEqual([
      { kind: 'text', text: 'Reading' },
      { kind: 'tool', tool: 'Edit', target: '/r/src/a.ts' },
      { kind: 'tool', tool: 'Bash', target: 'npm test' },
    ]);
  });

  it('reports tool errors and API retries (liveness, not silence)', () => {
    expect(
      readStreamLine(
        JSON.stringify({
          type: 'user',
          message: {
            content: [{ type: 'tool_result', is_error: true, content: 'File has not been read yet' }],
          },
        }),
      ),
    ).toEqual([{ kind: 'tool_error', text: 'File has not been read yet' }]);
    expect(
      readStreamLine(
        JSON.stringify({
          type: 'system',
          subtype: 'api_retry',
          attempt: 2,
          max_retries: 10,
          retry_delay_ms: 4000,
          error_status: 429,
          error: 'rate_limit',
        }),
      ),
    ).toEqual([{ kind: 'retry', attempt: 2, maxRetries: 10, error: 'rate_limit', delayMs: 4000 }]);
  });

  it('ignores junk lines instead of failing', () => {
    expect(readStreamLine('not json at all')).toEqual([]);
    expect(readStreamLine('{"broken": ')).toEqual([]);
    expect(readStreamLine(JSON.stringify({ type: 'system', subtype: 'init' }))).toEqual([]);
  });
});

describe('Claude Code arguments', () => {
  const base = {
    attempt: 1,
    systemPrompt: 'SYS',
    userPrompt: 'USER',
    model: 'opus',
    fallbackModel: 'sonnet',
    maxTurns: 1,
    maxBudgetUsd: 0.4,
    cwd: '/r',
    timeoutMs: 1000,
    signal: new AbortController().signal,
  };

  // Issue 15: stream-json for the answer-only calls too, so a 429 being retried shows (api_retry).
  it('orchestrator: stream-json output, plan mode, no tools, our system prompt only, prompt not in argv', () => {
    const args = claudeArgs({
      ...base,
      role: 'orchestrator',
      tools: [],
      permissionMode: 'plan',
      streaming: false,
    });
    expect(args).toEqual([
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--max-turns',
      '1',
      '--no-session-persistence',
      '--permission-mode',
      'plan',
      '--model',
      'opus',
      '--tools',
      '',
      '--max-budget-usd',
      '0.4',
      '--fallback-model',
      'sonnet',
      '--system-prompt',
      'SYS',
    ]);
    expect(args).not.toContain('USER');
  });

  it('builder: stream-json, bypassPermissions, --tools restricts and --allowedTools pre-approves', () => {
    const args = claudeArgs({
      ...base,
      role: 'builder',
      tools: ['Read', 'Edit'],
      permissionMode: 'bypassPermissions',
      streaming: true,
      maxTurns: 8,
      fallbackModel: null,
    });
    expect(args).toEqual([
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--max-turns',
      '8',
      '--no-session-persistence',
      '--permission-mode',
      'bypassPermissions',
      '--model',
      'opus',
      '--tools',
      'Read,Edit',
      '--max-budget-usd',
      '0.4',
      '--allowedTools',
      'Read,Edit',
      '--append-system-prompt',
      'SYS',
    ]);
  });
});
