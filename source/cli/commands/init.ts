import { resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { type ConfirmFence, initWorkspace } from '../../engine/index.js';
import { EXIT } from '../exit-codes.js';
import { type CommandIo, println } from '../io.js';

/** `relais init [project] [--force] [--allow globs]`: config, workspace, prompts, schemas, STATE, git exclude. */
export async function initCommand(
  io: CommandIo,
  projectArg: string | undefined,
  flags: { force: boolean; json: boolean; allow?: string },
): Promise<number> {
  const root = resolve(io.cwd, projectArg ?? '.');
  const allowedGlobs = flags.allow
    ?.split(',')
    .map((g) => g.trim())
    .filter(Boolean);
  const interactive = !flags.json && io.stdin?.isTTY === true && io.stdout.isTTY === true;
  const result = await initWorkspace(root, {
    force: flags.force,
    env: io.env,
    now: new Date(),
    ...(allowedGlobs ? { allowedGlobs } : {}),
    ...(interactive && io.stdin ? { confirmFence: askFence(io, io.stdin) } : {}),
  });
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

/** On a terminal: shows the derived fence and takes Enter (keep it) or a comma-separated list. */
function askFence(io: CommandIo, input: NodeJS.ReadableStream): ConfirmFence {
  return async (derived) => {
    println(io.stdout, 'The builder may only touch these paths (scope.default_allowed_globs):');
    for (const glob of derived.globs) println(io.stdout, `  ${glob}  (${derived.reasons[glob]})`);
    const rl = createInterface({ input, output: io.stdout as NodeJS.WritableStream });
    try {
      const answer = (await rl.question('Enter to accept, or type the globs (comma-separated): ')).trim();
      const typed = answer
        .split(',')
        .map((g) => g.trim())
        .filter(Boolean);
      return typed.length > 0 ? typed : derived.globs;
    } finally {
      rl.close();
    }
  };
}
