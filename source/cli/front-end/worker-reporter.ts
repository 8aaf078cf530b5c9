import type { StampedEvent } from '../../engine/index.js';
import { type CommandIo, println } from '../io.js';

/**
 * The fleet worker's lines: a daemon's log, stamped by the worker itself to the millisecond
 * (`[worker] 12:00:01.123 took run …`); information on stdout, warnings and errors on stderr.
 */
export function workerReporter(io: CommandIo): (event: StampedEvent) => void {
  return (event) => {
    if (event.type === 'log')
      println(event.level === 'info' ? io.stdout : io.stderr, `[worker] ${event.message}`);
  };
}
