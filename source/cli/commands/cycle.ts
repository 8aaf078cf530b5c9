import { resolve } from 'node:path';
import {
  type CycleCommandOutcome,
  type CycleRunners,
  cycleEntry,
  type GivenSections,
  type LoopEnd,
  type Reply,
} from '../../engine/index.js';
import { withEngine } from '../engine-session.js';
import { EXIT } from '../exit-codes.js';
import { chooseGates } from '../front-end/choose-gates.js';
import { type CommandIo, println } from '../io.js';

/**
 * `relais cycle [dir] [--loop] [--resume] [--yes] [--json]`: one deadf cycle (seed 003), or cycles
 * until DONE or a human is needed. The reply token is the last line printed; the exit code tells
 * the three replies apart, and a pause (needs_human) from a plain failure.
 */

export const CYCLE_EXIT = {
  CYCLE_OK: 0,
  CYCLE_FAIL: 1,
  NEEDS_HUMAN: 3,
  DONE: 4,
} as const;

export interface CycleFlags {
  readonly json: boolean;
  readonly loop: boolean;
  readonly resume: boolean;
  readonly yes: boolean;
  readonly cycleId?: string;
  /** With --resume: the human's judgement of the paused task's LLM criteria (yes or no). */
  readonly verdict?: string;
  readonly reason?: string;
  /** With --resume: the human's answer to the implementer's question (CYCLE_NEEDS_INPUT). */
  readonly answer?: string;
}

/**
 * The sections come from relais.config.json (`cycle`, `cycle.agents`, `codex_cli`), whose defaults
 * are the seed's; a caller (tests) may pass its own.
 */
export async function cycleCommand(
  io: CommandIo,
  projectArg: string | undefined,
  flags: CycleFlags,
  given: GivenSections = {},
  runners?: CycleRunners,
): Promise<number> {
  const usage = usageProblem(flags);
  if (usage) {
    println(io.stderr, `relais cycle: ${usage}`);
    return EXIT.USAGE;
  }
  const { gates, close } = chooseGates(io, { json: flags.json, yes: flags.yes, appGates: null });
  try {
    const outcome = await withEngine(
      io,
      { json: flags.json, onInterrupt: 'stopping the agent and recording the cycle as failed' },
      ({ bus, signal }) =>
        cycleEntry({
          root: resolve(io.cwd, projectArg ?? '.'),
          bus,
          signal,
          env: io.env,
          gates,
          runners,
          given,
          loop: flags.loop,
          cycleId: flags.cycleId,
          resume: flags.resume
            ? { verdict: flags.verdict, reason: flags.reason, answer: flags.answer }
            : null,
        }),
    );
    return exitFor(io, outcome, flags.json);
  } finally {
    close();
  }
}

/** Prints what the outcome leaves to the command (the reply token is the last line) and its exit code. */
function exitFor(io: CommandIo, outcome: CycleCommandOutcome, json: boolean): number {
  switch (outcome.kind) {
    case 'refused':
      println(io.stderr, `relais cycle: ${outcome.detail}${outcome.fix ? `\nFix: ${outcome.fix}` : ''}`);
      return EXIT.BLOCKED;
    case 'resume_refused':
      println(io.stderr, `relais cycle --resume: ${outcome.detail}`);
      return EXIT.STOP;
    case 'resumed':
      println(io.stdout, `Resumed: phase ${outcome.phase}`);
      return EXIT.SUCCESS;
    case 'cycle':
      if (outcome.interrupted) return EXIT.INTERRUPTED;
      // The reply token alone is the last line (seed 003 REPLY), whatever the reporter stamps.
      if (!json) println(io.stdout, outcome.outcome.reply);
      // A pause (needs_human, an unreadable STATE.json included) is 3, not a failure to retry (1).
      return replyExit(outcome.outcome.reply, outcome.outcome.phase === 'needs_human');
    case 'loop':
      // The reply token stays the last line a human or a script reads (NDJSON has it in cycle.finished).
      if (!json && outcome.result.last) println(io.stdout, outcome.result.last.reply);
      return LOOP_EXIT[outcome.result.end];
  }
}

function replyExit(reply: Reply, needsHuman: boolean): number {
  if (reply === 'CYCLE_FAIL' && needsHuman) return CYCLE_EXIT.NEEDS_HUMAN;
  return CYCLE_EXIT[reply];
}

/** A loop that reached DONE succeeded (0); the other ends keep their single-cycle meaning. */
const LOOP_EXIT: Record<LoopEnd, number> = {
  done: EXIT.SUCCESS,
  needs_human: CYCLE_EXIT.NEEDS_HUMAN,
  refused: CYCLE_EXIT.CYCLE_FAIL,
  failures: CYCLE_EXIT.CYCLE_FAIL,
  max_cycles: CYCLE_EXIT.CYCLE_FAIL,
  interrupted: EXIT.INTERRUPTED,
};

/** Flag combinations that cannot mean anything: refused before anything runs. */
function usageProblem(flags: CycleFlags): string | null {
  if (flags.loop && flags.cycleId)
    return '--cycle-id names one cycle and cannot be used with --loop (every cycle of a loop gets a fresh id)';
  if (flags.verdict !== undefined && !flags.resume)
    return '--verdict answers a paused verification: use it with --resume';
  if (flags.verdict !== undefined && !/^(yes|no)$/i.test(flags.verdict)) return '--verdict is yes or no';
  if (flags.reason !== undefined && flags.verdict === undefined) return '--reason goes with --verdict';
  if (flags.answer !== undefined && !flags.resume)
    return "--answer answers the implementer's question of a paused cycle: use it with --resume";
  return null;
}
