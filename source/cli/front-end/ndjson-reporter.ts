import type { StampedEvent } from '../../engine/index.js';
import type { CommandIo } from '../io.js';

/** `--json`: every engine event as one JSON line on stdout, nothing else. */
export function ndjsonReporter(io: CommandIo): (event: StampedEvent) => void {
  return (event) => io.stdout.write(`${JSON.stringify(event)}\n`);
}
