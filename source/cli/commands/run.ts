import { resolve } from 'node:path';
import { runTickWaitingOutLimits } from '../../engine/index.js';
import { withEngine } from '../engine-session.js';
import { exitCodeFor } from '../exit-codes.js';
import type { CommandIo } from '../io.js';

/** `relais run [project]`: one judged tick. */
export function runCommand(
  io: CommandIo,
  projectArg: string | undefined,
  flags: { json: boolean },
): Promise<number> {
  const root = resolve(io.cwd, projectArg ?? '.');
  return withEngine(
    io,
    { json: flags.json, onInterrupt: 'stopping the agent and rolling back' },
    async ({ bus, signal }) => {
      const result = await runTickWaitingOutLimits({ root, bus, signal, env: io.env, command: 'run' });
      return exitCodeFor(result.verdict, result.interrupted);
    },
  );
}
