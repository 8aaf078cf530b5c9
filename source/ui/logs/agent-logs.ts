import type { GateDocument } from '../../engine/gates.js';

/**
 * The app's way to past agent runs (issue 16 item 11): the engine keeps each run's transcript in
 * history, and the command hands the app this port to list and read them. The app owns the port
 * (it says what it needs); the CLI adapts the engine's entries to it.
 */
export interface AgentLogEntry {
  /** What `read` takes. */
  readonly id: string;
  readonly role: string;
  readonly attempt: number;
  /** When the run started, ISO 8601. */
  readonly startedAt: string;
  readonly bytes: number;
  /** Being written now: reading it again (`r`) shows what came since. */
  readonly running: boolean;
  /** The file, from the project's root: a pager opens it from another terminal. */
  readonly path: string;
}

export interface AgentLogPort {
  list(): Promise<readonly AgentLogEntry[]>;
  read(id: string): Promise<string>;
}

/** What the list shows of a run: when it started (local time), the agent, its size. */
export function logLabel(entry: AgentLogEntry): string {
  const at = new Date(entry.startedAt);
  const when = Number.isNaN(at.getTime())
    ? entry.startedAt
    : `${at.toLocaleDateString('en-CA')} ${at.toTimeString().slice(0, 8)}`;
  const attempt = entry.attempt > 1 ? ` #${entry.attempt}` : '';
  return `${when}  ${entry.role}${attempt}`;
}

/** A transcript as the viewer's document: named by the file a pager would open. */
export function logDocument(entry: AgentLogEntry, text: string): GateDocument {
  return { name: entry.path, text };
}
