import { resolve } from 'node:path';
import { initWorkspace } from '../../engine/index.js';
import { EXIT } from '../exit-codes.js';
import { type CommandIo, println } from '../io.js';

/** `relais init [project] [--force]`: config, workspace, prompts, schemas, STATE, git exclude. */
export async function initCommand(
  io: CommandIo,
  projectArg: string | undefined,
  flags: { force: boolean; json: boolean },
): Promise<number> {
  const root = resolve(io.cwd, projectArg ?? '.');
  const result = await initWorkspace(root, { force: flags.force, env: io.env, now: new Date() });
  if (flags.json) {
    println(io.stdout, JSON.stringify({ ok: result.ok, root, steps: result.steps }));
  } else {
    for (const step of result.steps) {
      println(io.stdout, `${step.action.padEnd(8)} ${step.path}${step.note ? `  (${step.note})` : ''}`);
    }
    println(
      io.stdout,
      result.ok
        ? `Relais is ready in ${root}. Next: relais doctor, then relais run.`
        : 'relais init could not finish: see the problems above.',
    );
  }
  return result.ok ? EXIT.SUCCESS : EXIT.STOP;
}
