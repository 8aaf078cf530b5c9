import { resolve } from 'node:path';
import { planEntry, statsLines } from '../../engine/index.js';
import { withEngine } from '../engine-session.js';
import { EXIT, exitCodeFor } from '../exit-codes.js';
import { chooseGates } from '../front-end/choose-gates.js';
import { type CommandIo, println } from '../io.js';

/**
 * `relais plan [dir]`: the Relay planner (seed 004) on PRD.md at this terminal, the same session
 * `ralphy start` opens with. `--issue <n>`: one planner pass on a GitHub issue thread through gh,
 * for a scheduler or CI. `--stats`: the quality signals of every planning session.
 */
export interface PlanFlags {
  readonly json: boolean;
  readonly yes: boolean;
  readonly issue: number | undefined;
  readonly stats: boolean;
}

export async function planCommand(io: CommandIo, projectArg: string | undefined, flags: PlanFlags) {
  if (flags.issue !== undefined && (!Number.isInteger(flags.issue) || flags.issue < 1)) {
    println(io.stderr, '--issue must be an issue number (a whole number of at least 1)');
    return EXIT.USAGE;
  }
  if (flags.stats && flags.issue !== undefined) {
    println(io.stderr, '--stats shows every session: it does not take --issue');
    return EXIT.USAGE;
  }
  const root = resolve(io.cwd, projectArg ?? '.');
  const issue = flags.issue;
  const mode = flags.stats
    ? { kind: 'stats' as const }
    : issue !== undefined
      ? { kind: 'issue' as const, issue }
      : { kind: 'prd' as const };
  return withEngine(
    io,
    { json: flags.json, onInterrupt: 'stopping the planner' },
    async ({ bus, signal }) => {
      const { gates, close } = chooseGates(io, { json: flags.json, yes: flags.yes, appGates: null });
      try {
        const result = await planEntry({ root, env: io.env, bus, signal, gates, mode });
        if (result.stats && flags.json) println(io.stdout, JSON.stringify(result.stats));
        else if (result.stats) for (const line of statsLines(result.stats)) println(io.stdout, line);
        return exitCodeFor(result.verdict, result.interrupted);
      } finally {
        close();
      }
    },
  );
}
