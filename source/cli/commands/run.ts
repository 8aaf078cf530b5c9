import { resolve } from 'node:path';
import { EngineBus } from '../../engine/events.js';
import { runTick } from '../../engine/tick/run-tick.js';
import { exitCodeFor } from '../exit-codes.js';
import { ndjsonReporter } from '../front-end/ndjson-reporter.js';
import { plainReporter } from '../front-end/plain-reporter.js';
import type { CommandIo } from '../io.js';
import { installInterruptHandler } from '../signals.js';

/** `relais run [project]`: one judged tick. */
export async function runCommand(
  io: CommandIo,
  projectArg: string | undefined,
  flags: { json: boolean },
): Promise<number> {
  const root = resolve(io.cwd, projectArg ?? '.');
  const bus = new EngineBus();
  bus.subscribe(flags.json ? ndjsonReporter(io) : plainReporter(io));
  const interrupts = installInterruptHandler((signal) => {
    bus.emit({
      type: 'log',
      level: 'warn',
      message: `${signal} received: stopping the agent and rolling back (press Ctrl-C again to force quit)`,
    });
  });
  try {
    const result = await runTick({ root, bus, signal: interrupts.signal, env: io.env, command: 'run' });
    return exitCodeFor(result.verdict, result.interrupted);
  } finally {
    interrupts.dispose();
  }
}
