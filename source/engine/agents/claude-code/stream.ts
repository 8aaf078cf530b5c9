/**
 * Reading Claude Code's output line by line. `--output-format json` prints one wrapper object;
 * `stream-json` prints `system`, `assistant`, `user` lines and a final `result` with the same
 * fields as the wrapper. Both are handled by one reader; unknown lines are ignored, not fatal.
 */

export interface ResultWrapper {
  readonly result: unknown;
  readonly isError: boolean;
  readonly subtype: string | null;
  readonly costUsd: number;
  readonly numTurns: number | null;
  readonly apiErrorStatus: number | null;
  readonly permissionDenials: string[];
}

export type StreamItem =
  | { kind: 'text'; text: string }
  | { kind: 'tool'; tool: string; target: string }
  | { kind: 'tool_error'; text: string }
  | { kind: 'retry'; attempt: number; maxRetries: number; error: string; delayMs: number }
  | { kind: 'result'; wrapper: ResultWrapper };

export function readStreamLine(line: string): StreamItem[] {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return [];
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(trimmed) as Record<string, unknown>;
  } catch {
    return [];
  }
  if (typeof value !== 'object' || value === null) return [];
  switch (value.type) {
    case 'result':
      return [{ kind: 'result', wrapper: toWrapper(value) }];
    case 'assistant':
      return assistantItems(value);
    case 'user':
      return toolErrors(value);
    case 'system':
      return value.subtype === 'api_retry'
        ? [
            {
              kind: 'retry',
              attempt: num(value.attempt) ?? 0,
              maxRetries: num(value.max_retries) ?? 0,
              error: String(value.error ?? value.error_status ?? 'api error'),
              delayMs: num(value.retry_delay_ms) ?? 0,
            },
          ]
        : [];
    default:
      return [];
  }
}

function toWrapper(value: Record<string, unknown>): ResultWrapper {
  return {
    result: value.result,
    isError: value.is_error === true,
    subtype: typeof value.subtype === 'string' ? value.subtype : null,
    costUsd: Math.max(0, num(value.total_cost_usd) ?? 0),
    numTurns: num(value.num_turns),
    apiErrorStatus: num(value.api_error_status),
    permissionDenials: denials(value.permission_denials),
  };
}

function denials(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.map((d: { tool_name?: unknown; tool_input?: unknown }) =>
    `${String(d?.tool_name ?? 'tool')} ${toolTarget(d?.tool_input)}`.trim(),
  );
}

function contentBlocks(value: Record<string, unknown>): Array<Record<string, unknown>> {
  const message = value.message as { content?: unknown } | undefined;
  return Array.isArray(message?.content) ? (message.content as Array<Record<string, unknown>>) : [];
}

function assistantItems(value: Record<string, unknown>): StreamItem[] {
  const items: StreamItem[] = [];
  for (const block of contentBlocks(value)) {
    if (block.type === 'text' && typeof block.text === 'string')
      items.push({ kind: 'text', text: block.text });
    if (block.type === 'tool_use') {
      items.push({ kind: 'tool', tool: String(block.name ?? 'tool'), target: toolTarget(block.input) });
    }
  }
  return items;
}

function toolErrors(value: Record<string, unknown>): StreamItem[] {
  return contentBlocks(value)
    .filter((b) => b.type === 'tool_result' && b.is_error === true)
    .map((b) => ({
      kind: 'tool_error' as const,
      text: typeof b.content === 'string' ? b.content : JSON.stringify(b.content ?? ''),
    }));
}

/** The one thing a human wants to see of a tool call: the file, pattern or command it acts on. */
function toolTarget(input: unknown): string {
  if (typeof input !== 'object' || input === null) return '';
  const i = input as Record<string, unknown>;
  for (const key of ['file_path', 'command', 'pattern', 'path', 'url']) {
    if (typeof i[key] === 'string') return i[key] as string;
  }
  return '';
}

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}
