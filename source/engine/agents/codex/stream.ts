/**
 * Reading `codex exec --json` line by line (codex-cli 0.169): `thread.started`, `turn.started`,
 * `item.started` / `item.updated` / `item.completed` whose item is an `agent_message`,
 * `command_execution` (command, aggregated_output, exit_code), `file_change` (changes), `reasoning`,
 * `error` (a warning Codex chose to show, e.g. unknown model metadata), `turn.completed` with token
 * usage, `turn.failed` with an error, and top-level `error` (reconnect notices). Unknown lines are
 * ignored, never fatal.
 */

export interface CodexUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

export type CodexItem =
  | { kind: 'thread'; id: string }
  | { kind: 'message'; text: string }
  | { kind: 'command_started'; command: string }
  | { kind: 'command'; command: string; exitCode: number | null; output: string }
  | { kind: 'file_change'; paths: string[] }
  | { kind: 'warning'; text: string }
  | { kind: 'turn_completed'; usage: CodexUsage }
  | { kind: 'turn_failed'; message: string };

export function readCodexLine(line: string): CodexItem[] {
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
    case 'thread.started':
      return [{ kind: 'thread', id: String(value.thread_id ?? '') }];
    case 'item.started':
      return startedItem(value.item);
    case 'item.completed':
      return completedItem(value.item);
    case 'turn.completed':
      return [{ kind: 'turn_completed', usage: usageOf(value.usage) }];
    case 'turn.failed':
      return [{ kind: 'turn_failed', message: messageOf((value.error as Record<string, unknown>) ?? {}) }];
    case 'error':
      return [{ kind: 'warning', text: messageOf(value) }];
    default:
      return [];
  }
}

function record(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
}

function startedItem(raw: unknown): CodexItem[] {
  const item = record(raw);
  if (item?.type === 'command_execution')
    return [{ kind: 'command_started', command: String(item.command ?? '') }];
  return [];
}

function completedItem(raw: unknown): CodexItem[] {
  const item = record(raw);
  if (!item) return [];
  switch (item.type) {
    case 'agent_message':
      return typeof item.text === 'string' ? [{ kind: 'message', text: item.text }] : [];
    case 'command_execution':
      return [
        {
          kind: 'command',
          command: String(item.command ?? ''),
          exitCode: typeof item.exit_code === 'number' ? item.exit_code : null,
          output: typeof item.aggregated_output === 'string' ? item.aggregated_output : '',
        },
      ];
    case 'file_change': {
      const changes = Array.isArray(item.changes) ? item.changes : [];
      return [
        { kind: 'file_change', paths: changes.map((c) => String(record(c)?.path ?? '')).filter(Boolean) },
      ];
    }
    case 'error':
      return [{ kind: 'warning', text: messageOf(item) }];
    default:
      return [];
  }
}

function messageOf(value: Record<string, unknown>): string {
  return typeof value.message === 'string' ? value.message : 'error';
}

function usageOf(raw: unknown): CodexUsage {
  const usage = record(raw) ?? {};
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  return { inputTokens: n(usage.input_tokens), outputTokens: n(usage.output_tokens) };
}
