import { resolve } from 'node:path';
import { EngineBus } from '../../engine/events.js';
import { type LoopExit, runLoop } from '../../engine/tick/loop.js';
import { EXIT } from '../exit-codes.js';
import { ndjsonReporter } from '../front-end/ndjson-reporter.js';
import { plainReporter } from '../front-end/plain-reporter.js';
import { type CommandIo, println } from '../io.js';
import { installInterruptHandler } from '../signals.js';

const EXIT_FOR: Record<LoopExit, number> = {
  success: EXIT.SUCCESS,
  stop: EXIT.STOP,
  blocked: EXIT.BLOCKED,
  interrupted: EXIT.INTERRUPTED,
};

/** `relais loop [project] --mode milestone|autonomous [--max-ticks N] [--json]`. */
export async function loopCommand(
  io: CommandIo,
  projectArg: string | undefined,
  flags: { json: boolean; mode: string; maxTicks: number | undefined },
): Promise<number> {
  if (flags.mode !== 'milestone' && flags.mode !== 'autonomous') {
    println(io.stderr, `--mode must be "milestone" or "autonomous" (got "${flags.mode}")`);
    return EXIT.USAGE;
  }
  if (flags.maxTicks !== undefined && (!Number.isInteger(flags.maxTicks) || flags.maxTicks < 1)) {
    println(io.stderr, '--max-ticks must be a whole number of at least 1');
    return EXIT.USAGE;
  }
  const bus = new EngineBus();
  bus.subscribe(flags.json ? ndjsonReporter(io) : plainReporter(io));
  const interrupts = installInterruptHandler((signal) => {
    bus.emit({
      type: 'log',
      level: 'warn',
      message: `${signal} received: stopping the agent, rolling back and ending the loop (press Ctrl-C again to force quit)`,
    });
  });
  try {
    const result = await runLoop({
      root: resolve(io.cwd, projectArg ?? '.'),
      bus,
      signal: interrupts.signal,
      env: io.env,
      mode: flags.mode,
      maxTicks: flags.maxTicks ?? null,
    });
    return EXIT_FOR[result.exit];
  } finally {
    interrupts.dispose();
  }
}
