import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  type BrainstormAnswers,
  loadCycleSetup,
  type MapResult,
  mapCodebase,
  parseAnswers,
  type SeedDocs,
  seedDocsFrom,
  writeConfirmedSeedDocs,
} from '../../engine/index.js';
import { withEngine } from '../engine-session.js';
import { EXIT } from '../exit-codes.js';
import type { CliFlags } from '../help/command-line.js';
import { type CommandIo, println } from '../io.js';
import { askBrainstorm, askYesNo, openTerminal } from './cycle-init-terminal.js';

/**
 * `relais cycle init [dir] [--answers FILE --confirm] [--remap]`: seed 003 P12 (the codebase
 * mapper) then P2 (the brainstorm). The seed docs are the human's: "Claude Code must NOT generate
 * seed docs automatically", so without a terminal and without an answers file nothing runs, and
 * nothing is written until the human confirmed the documents shown.
 */

type InitFlags = Pick<CliFlags, 'answers' | 'confirm' | 'remap'>;

export const NO_HUMAN =
  'relais cycle init: the brainstorm needs a human (seed docs are never generated) and there is no terminal.\n' +
  'Fix: run it in a terminal, or write your answers in a JSON file (docs/cycle.md shows the shape) and run `relais cycle init --answers FILE --confirm`.';

export async function cycleInitCommand(
  io: CommandIo,
  projectArg: string | undefined,
  flags: InitFlags,
): Promise<number> {
  if (flags.confirm && !flags.answers) {
    println(
      io.stderr,
      'relais cycle init: --confirm goes with --answers (in a terminal you confirm by answering y)',
    );
    return EXIT.USAGE;
  }
  const interactive = io.stdin?.isTTY === true && io.stdout.isTTY === true;
  // Refused before the mapper spends anything: no human, no brainstorm.
  if (!flags.answers && !interactive) {
    println(io.stderr, NO_HUMAN);
    return EXIT.BLOCKED;
  }
  const fromFile = flags.answers ? await readAnswersFile(io, flags.answers) : null;
  if (fromFile === 'invalid') return EXIT.USAGE;
  const root = resolve(io.cwd, projectArg ?? '.');
  const loaded = await loadCycleSetup(root);
  if (!loaded.ok) {
    println(io.stderr, `relais cycle init: ${loaded.detail}\nFix: run \`relais init\` first.`);
    return EXIT.BLOCKED;
  }
  const setup = loaded.setup;
  const { map, interrupted } = await withEngine(
    io,
    { json: false, onInterrupt: 'stopping the mapper' },
    async ({ bus, signal }) => ({
      map: await mapCodebase(setup, { bus, signal, env: io.env, remap: flags.remap }),
      interrupted: signal.aborted,
    }),
  );
  // An interrupt during the mapping ends init: no brainstorm after Ctrl-C.
  if (interrupted) return EXIT.INTERRUPTED;
  printMap(io, map, setup.policy.docs_dir);

  const terminal = interactive ? openTerminal(io) : null;
  try {
    const answers = fromFile ?? (terminal ? await askBrainstorm(terminal, io) : null);
    if (!answers) return EXIT.STOP;
    const docs = await seedDocsFrom(answers, map);
    printDocs(io, docs, setup.root, setup.policy.docs_dir);
    const confirmed =
      flags.confirm ||
      (terminal !== null &&
        (await askYesNo(terminal, `Write these documents in ${setup.policy.docs_dir}/?`)));
    if (!confirmed) {
      println(
        io.stdout,
        fromFile && !terminal
          ? 'Nothing written: review the documents above, then run again with --confirm.'
          : 'Nothing written.',
      );
      return EXIT.STOP;
    }
    const written = await writeConfirmedSeedDocs(setup, docs, map, io.env);
    if (!written.ok) {
      println(io.stderr, `relais cycle init: ${written.detail}`);
      return EXIT.BLOCKED;
    }
    println(io.stdout, `Written: ${written.written.join(', ')}`);
    println(io.stdout, `Cycle state: ${STATE_TEXT[written.state]}`);
    if (written.commit)
      println(io.stdout, `Committed: ${written.commit.slice(0, 12)} relais(init): seed docs`);
    if (written.commitNote) println(io.stdout, `Not committed: ${written.commitNote}`);
    println(io.stdout, 'Next: relais cycle --loop');
    return EXIT.SUCCESS;
  } finally {
    terminal?.close();
  }
}

/** The answers file, checked like terminal answers; its problem printed, nothing written. */
async function readAnswersFile(io: CommandIo, file: string): Promise<BrainstormAnswers | 'invalid'> {
  const text = await readFile(resolve(io.cwd, file), 'utf8').catch((e: Error) => e);
  if (text instanceof Error) {
    println(io.stderr, `relais cycle init: cannot read --answers ${file}: ${text.message}`);
    return 'invalid';
  }
  const parsed = parseAnswers(text);
  if (!parsed.ok) {
    println(io.stderr, `relais cycle init: --answers ${file}: ${parsed.reason}\nNothing was written.`);
    return 'invalid';
  }
  return parsed.answers;
}

const STATE_TEXT = {
  created:
    'relais/cycle/STATE.json created (phase research: the first cycle checks the docs, then picks a track)',
  resumed: 'the pause for seed docs is over (relais cycle continues)',
  kept: 'relais/cycle/STATE.json kept as it was (a cycle is under way)',
} as const;

function printMap(io: CommandIo, map: MapResult, docsDir: string): void {
  println(io.stdout, `Codebase: ${map.detection.kind} (${map.detection.why})`);
  if (map.degraded) println(io.stdout, `Mapping failed, continuing as greenfield: ${map.degraded}`);
  const files = Object.keys(map.docs);
  if (files.length > 0) {
    const how =
      map.agentCalls > 0 ? `written by the mapper (${map.agentCalls} call(s))` : 'kept from the last mapping';
    println(
      io.stdout,
      `Living docs: ${files.length} files in ${docsDir}/p12/, ${map.tokens} tokens, ${how}${map.trimmed ? ', trimmed to the cap' : ''}`,
    );
    // Seed 003 P12: the living docs feed the brainstorm. The human reads them whole before answering.
    println(io.stdout, 'Read them before you answer: they say what the code is today.');
    for (const [path, text] of Object.entries(map.docs)) {
      println(io.stdout, `\n----- ${path} -----`);
      io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
    }
    println(io.stdout, '----- end of the living docs -----');
  } else println(io.stdout, 'Living docs: none (greenfield brainstorm)');
}

function printDocs(io: CommandIo, docs: SeedDocs, root: string, docsDir: string): void {
  for (const [name, text] of Object.entries(docs)) {
    // A returning project's documents are replaced as a whole: say so before the human confirms.
    const replaces = existsSync(join(root, docsDir, name)) ? ' (replaces the current file)' : '';
    println(io.stdout, `\n----- ${docsDir}/${name}${replaces} -----`);
    io.stdout.write(text);
  }
  println(io.stdout, `----- end (plus ${docsDir}/P2_DONE and the cycle state) -----\n`);
}
