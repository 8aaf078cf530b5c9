import { EngineBus } from '../engine/events.js';
import { ndjsonReporter } from './front-end/ndjson-reporter.js';
import { plainReporter } from './front-end/plain-reporter.js';
import type { CommandIo } from './io.js';
import { installInterruptHandler } from './signals.js';

/**
 * What every command that drives the engine needs: a bus with the chosen front end attached, and
 * the interrupt handler (first signal aborts, second force-quits), disposed once the work is over.
 */
export async function withEngine<T>(
  io: CommandIo,
  json: boolean,
  onInterrupt: string,
  work: (bus: EngineBus, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const bus = new EngineBus();
  bus.subscribe(json ? ndjsonReporter(io) : plainReporter(io));
  const interrupts = installInterruptHandler((signal) => {
    bus.emit({
      type: 'log',
      level: 'warn',
      message: `${signal} received: ${onInterrupt} (press Ctrl-C again to force quit)`,
    });
  });
  try {
    return await work(bus, interrupts.signal);
  } finally {
    interrupts.dispose();
  }
}
