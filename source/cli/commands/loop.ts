import { resolve } from 'node:path';
import { type LoopExit, runLoop } from '../../engine/index.js';
import { withEngine } from '../engine-session.js';
import { EXIT } from '../exit-codes.js';
import { type CommandIo, println } from '../io.js';

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
  const mode = flags.mode;
  const root = resolve(io.cwd, projectArg ?? '.');
  return withEngine(
    io,
    {
      json: flags.json,
      onInterrupt: 'stopping the agent, rolling back and ending the loop',
      view: 'loop',
      project: root,
    },
    async ({ bus, signal }) => {
      const result = await runLoop({
        root,
        bus,
        signal,
        env: io.env,
        mode,
        maxTicks: flags.maxTicks ?? null,
      });
      return EXIT_FOR[result.exit];
    },
  );
}
