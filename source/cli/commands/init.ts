import { resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { type ConfirmFence, initWorkspace, resetLedger } from '../../engine/index.js';
import { EXIT } from '../exit-codes.js';
import { type CommandIo, println } from '../io.js';

type InitStep = Awaited<ReturnType<typeof initWorkspace>>['steps'][number];

/**
 * `relais init [project] [--force] [--allow globs] | --reset-ledger`: config, workspace, prompts,
 * schemas, STATE, git exclude; or only a fresh budget ledger.
 */
export async function initCommand(
  io: CommandIo,
  projectArg: string | undefined,
  flags: { force: boolean; json: boolean; allow?: string | undefined; resetLedger?: boolean },
): Promise<number> {
  const root = resolve(io.cwd, projectArg ?? '.');
  if (flags.resetLedger && (flags.force || flags.allow !== undefined)) {
    println(
      io.stderr,
      'relais init: --reset-ledger touches only the ledger; it takes neither --force nor --allow',
    );
    return EXIT.USAGE;
  }
  if (flags.resetLedger) {
    const result = await resetLedger(root, new Date());
    printSteps(io, root, result, flags.json, 'The ledger starts from zero; nothing else was changed.');
    return result.ok ? EXIT.SUCCESS : EXIT.STOP;
  }
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
  printSteps(
    io,
    root,
    result,
    flags.json,
    // The README's flow: check, commit the config, write PRD.md, run the workflow.
    `Relais is ready in ${root}. Next: relais doctor, commit relais.config.json, write PRD.md, then ralphy start.`,
  );
  return result.ok ? EXIT.SUCCESS : EXIT.STOP;
}

function printSteps(
  io: CommandIo,
  root: string,
  result: { ok: boolean; steps: readonly InitStep[] },
  json: boolean,
  done: string,
): void {
  if (json) {
    println(io.stdout, JSON.stringify({ ok: result.ok, root, steps: result.steps }));
    return;
  }
  for (const step of result.steps) {
    println(io.stdout, `${step.action.padEnd(8)} ${step.path}${step.note ? `  (${step.note})` : ''}`);
  }
  println(io.stdout, result.ok ? done : 'relais init could not finish: see the problems above.');
}

/** On a terminal: shows the derived fence and takes Enter (keep it) or a comma-separated list. */
function askFence(io: CommandIo, input: NodeJS.ReadableStream): ConfirmFence {
  return async (derived, refused) => {
    if (refused) println(io.stdout, `That fence is ${refused}.`);
    else {
      println(io.stdout, 'The builder may only touch these paths (scope.default_allowed_globs):');
      for (const glob of derived.globs) println(io.stdout, `  ${glob}  (${derived.reasons[glob]})`);
    }
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
