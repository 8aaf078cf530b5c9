import { resolve } from 'node:path';
import { abortWorkflow } from '../../engine/index.js';
import { EXIT } from '../exit-codes.js';
import { type CommandIo, println } from '../io.js';

/** `ralphy abort [project]` (seed 002 §9): stops the running workflow, which ends FAILED (aborted). */
export async function abortCommand(
  io: CommandIo,
  projectArg: string | undefined,
  flags: { json: boolean },
): Promise<number> {
  const outcome = await abortWorkflow(resolve(io.cwd, projectArg ?? '.'), io.env);
  const { ok, message, ...end } = outcome;
  if (flags.json) println(io.stdout, JSON.stringify({ ok, message, ...end }));
  else println(ok ? io.stdout : io.stderr, message);
  return ok ? EXIT.SUCCESS : EXIT.STOP;
}
