import type { Pool } from 'pg';
import type { StampedEvent } from '../events.js';
import { FLEET_SCHEMA as S } from './settings.js';

/**
 * A run's engine events, kept in the database as its steps emit them, so any machine can follow a
 * run whichever worker executes it (`ralphy attach <run>`): the same events the local app and
 * `--json` read, in order. Writes are batched (a step's agent can print thousands of lines) and
 * never block the step; an event too large for a row keeps its start.
 */

const FLUSH_MS = 200;
const MAX_EVENT_CHARS = 16_000;

export interface EventSink {
  push(event: StampedEvent): void;
  /** Writes what is buffered; the step calls it before it ends. */
  flush(): Promise<void>;
}

export function eventSink(pool: Pool, runId: string, onError: (message: string) => void): EventSink {
  let buffer: string[] = [];
  let writing: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | null = null;
  let failed = false;
  const write = () => {
    timer = null;
    const batch = buffer;
    buffer = [];
    if (batch.length === 0) return writing;
    writing = writing.then(async () => {
      try {
        await pool.query(
          `INSERT INTO ${S}.events (run_id, event) SELECT $1, e::jsonb FROM unnest($2::text[]) WITH ORDINALITY AS t(e, n) ORDER BY n`,
          [runId, batch],
        );
      } catch (error) {
        // The run goes on without its live view; said once, not once per batch.
        if (!failed) onError(`events of ${runId} not kept: ${(error as Error).message}`);
        failed = true;
      }
    });
    return writing;
  };
  return {
    push(event) {
      buffer.push(serialise(event));
      timer ??= setTimeout(write, FLUSH_MS);
    },
    flush() {
      if (timer) clearTimeout(timer);
      return write();
    },
  };
}

function serialise(event: StampedEvent): string {
  const text = JSON.stringify(event);
  if (text.length <= MAX_EVENT_CHARS) return text;
  return JSON.stringify({
    type: 'log',
    level: 'warn',
    message: `(${event.type} event of ${text.length} characters, shortened) ${text.slice(0, 2000)}`,
    at: event.at,
  });
}

export interface StoredEvent {
  readonly seq: number;
  readonly event: StampedEvent;
}

/** The run's events after `afterSeq`, oldest first, at most `limit`. */
export async function readEvents(
  pool: Pool,
  runId: string,
  afterSeq: number,
  limit = 2000,
): Promise<StoredEvent[]> {
  const { rows } = await pool.query<{ seq: string; event: StampedEvent }>(
    `SELECT seq, event FROM ${S}.events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
    [runId, afterSeq, limit],
  );
  return rows.map((r) => ({ seq: Number(r.seq), event: r.event }));
}
