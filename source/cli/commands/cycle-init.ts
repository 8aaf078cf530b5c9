import { resolve } from 'node:path';
import { type CycleInitOutcome, cycleInitEntry } from '../../engine/index.js';
import { withEngine } from '../engine-session.js';
import { EXIT } from '../exit-codes.js';
import { seedDocsHuman } from '../front-end/seed-docs-human.js';
import type { CliFlags } from '../help/command-line.js';
import { type CommandIo, println } from '../io.js';

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

const EXIT_FOR: Record<CycleInitOutcome['kind'], number> = {
  bad_answers: EXIT.USAGE,
  no_setup: EXIT.BLOCKED,
  interrupted: EXIT.INTERRUPTED,
  not_written: EXIT.STOP,
  write_failed: EXIT.BLOCKED,
  written: EXIT.SUCCESS,
};

export async function cycleInitCommand(io: CommandIo, projectArg: string | undefined, flags: InitFlags) {
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
  const answers = flags.answers;
  const human = seedDocsHuman(io, { interactive, confirmFlag: flags.confirm, answersFile: Boolean(answers) });
  try {
    const outcome = await withEngine(
      io,
      { json: false, onInterrupt: 'stopping cycle init; nothing is written' },
      ({ bus, signal }) =>
        cycleInitEntry({
          bus,
          signal,
          root: resolve(io.cwd, projectArg ?? '.'),
          env: io.env,
          remap: flags.remap,
          answersFile: answers ? { path: resolve(io.cwd, answers), named: answers } : null,
          human,
        }),
    );
    printOutcome(io, outcome);
    return EXIT_FOR[outcome.kind];
  } finally {
    human.close();
  }
}

const STATE_TEXT = {
  created:
    'relais/cycle/STATE.json created (phase research: the first cycle checks the docs, then picks a track)',
  resumed: 'the pause for seed docs is over (relais cycle continues)',
  kept: 'relais/cycle/STATE.json kept as it was (a cycle is under way)',
} as const;

function printOutcome(io: CommandIo, outcome: CycleInitOutcome): void {
  if (outcome.kind === 'bad_answers' || outcome.kind === 'write_failed')
    println(io.stderr, `relais cycle init: ${outcome.detail}`);
  if (outcome.kind === 'no_setup')
    println(
      io.stderr,
      `relais cycle init: ${outcome.detail}\nFix: ${outcome.fix ?? 'run `relais init` first.'}`,
    );
  if (outcome.kind !== 'written') return;
  const { written } = outcome;
  println(io.stdout, `Written: ${written.written.join(', ')}`);
  println(io.stdout, `Cycle state: ${STATE_TEXT[written.state]}`);
  if (written.commit) println(io.stdout, `Committed: ${written.commit.slice(0, 12)} relais(init): seed docs`);
  if (written.commitNote) println(io.stdout, `Not committed: ${written.commitNote}`);
  println(io.stdout, 'Next: relais cycle --loop');
}
