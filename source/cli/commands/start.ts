import { resolve } from 'node:path';
import { realClock, runWorkflow, type WorkflowOutcome } from '../../engine/index.js';
import { withEngine } from '../engine-session.js';
import { EXIT } from '../exit-codes.js';
import { chooseGates } from '../front-end/choose-gates.js';
import { type CommandIo, println } from '../io.js';

const EXIT_FOR: Record<WorkflowOutcome['status'], number> = {
  completed: EXIT.SUCCESS,
  failed: EXIT.STOP,
  rejected: EXIT.STOP,
  interrupted: EXIT.INTERRUPTED,
  needs_input: EXIT.STOP,
  blocked: EXIT.BLOCKED,
};

const ENGINES = ['ticks', 'single', 'cycle'] as const;
type EngineName = (typeof ENGINES)[number];

/**
 * `ralphy start <project> [--yes] [--engine e] [--issue n] [--parallel N] [--attempts K] [--json]`
 * (seed 002 §9; --parallel and --attempts: issue 19). Gates are
 * answered by a human at a `[y/n]` prompt on a terminal, approved with `--yes`, and refused when
 * nobody can answer. `--engine` picks the implementation engine of a new workflow; `--issue`
 * starts from a GitHub issue whose planning is ready for the spec (seed 004's handoff).
 */
export async function startCommand(
  io: CommandIo,
  projectArg: string | undefined,
  flags: {
    json: boolean;
    yes: boolean;
    engine?: string | undefined;
    issue?: number | undefined;
    parallel?: number | undefined;
    attempts?: number | undefined;
  },
): Promise<number> {
  if (flags.engine !== undefined && !ENGINES.includes(flags.engine as EngineName)) {
    println(io.stderr, `--engine must be one of ${ENGINES.join(', ')} (got "${flags.engine}")`);
    return EXIT.USAGE;
  }
  if (flags.issue !== undefined && (!Number.isInteger(flags.issue) || flags.issue < 1)) {
    println(io.stderr, '--issue must be an issue number (a whole number of at least 1)');
    return EXIT.USAGE;
  }
  const engine = flags.engine as EngineName | undefined;
  const issue = flags.issue;
  const root = resolve(io.cwd, projectArg ?? '.');
  const parallel = flags.parallel;
  // Issue 19: 1 to 16 lanes, as workflow.parallel allows.
  if (parallel !== undefined && (!Number.isInteger(parallel) || parallel < 1 || parallel > 16)) {
    println(io.stderr, `ralphy start: --parallel needs a whole number from 1 to 16 (got ${parallel})`);
    return EXIT.USAGE;
  }
  // Issue 19, best of N: 1 to 8 builders per task, as workflow.best_of allows.
  const attempts = flags.attempts;
  if (attempts !== undefined && (!Number.isInteger(attempts) || attempts < 1 || attempts > 8)) {
    println(io.stderr, `ralphy start: --attempts needs a whole number from 1 to 8 (got ${attempts})`);
    return EXIT.USAGE;
  }
  return await withEngine(
    io,
    {
      json: flags.json,
      onInterrupt: 'stopping the agent; the workflow can be resumed with ralphy start',
      view: 'workflow',
      project: root,
    },
    async ({ bus, signal, userAbort, pauseRequested, appGates }) => {
      const { gates, close } = chooseGates(io, { json: flags.json, yes: flags.yes, appGates });
      try {
        const outcome = await runWorkflow({
          root,
          bus,
          signal,
          env: io.env,
          gates,
          clock: realClock,
          ...(engine ? { engine } : {}),
          ...(issue !== undefined ? { issue } : {}),
          abortRequested: () => userAbort.aborted,
          abortedBy: () => 'the abort key (a) in the app',
          pauseRequested,
          ...(parallel !== undefined ? { parallel } : {}),
          ...(attempts !== undefined ? { attempts } : {}),
        });
        return EXIT_FOR[outcome.status];
      } finally {
        close();
      }
    },
  );
}
