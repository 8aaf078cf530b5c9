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

/**
 * `ralphy start <project> [--yes] [--parallel N] [--json]` (seed 002 §9; --parallel: issue 19). Gates are answered by a human at a
 * `[y/n]` prompt on a terminal, approved with `--yes`, and refused when nobody can answer.
 */
export function startCommand(
  io: CommandIo,
  projectArg: string | undefined,
  flags: { json: boolean; yes: boolean; parallel?: number | undefined },
): Promise<number> {
  const root = resolve(io.cwd, projectArg ?? '.');
  const parallel = flags.parallel;
  // Issue 19: 1 to 16 lanes, as workflow.parallel allows.
  if (parallel !== undefined && (!Number.isInteger(parallel) || parallel < 1 || parallel > 16)) {
    println(io.stderr, `ralphy start: --parallel needs a whole number from 1 to 16 (got ${parallel})`);
    return Promise.resolve(EXIT.USAGE);
  }
  return withEngine(
    io,
    {
      json: flags.json,
      onInterrupt: 'stopping the agent; the workflow can be resumed with ralphy start',
      view: 'workflow',
      project: root,
    },
    async ({ bus, signal, userAbort, appGates }) => {
      const { gates, close } = chooseGates(io, { json: flags.json, yes: flags.yes, appGates });
      try {
        const outcome = await runWorkflow({
          root,
          bus,
          signal,
          env: io.env,
          gates,
          clock: realClock,
          abortRequested: () => userAbort.aborted,
          abortedBy: () => 'the abort key (a) in the app',
          ...(parallel !== undefined ? { parallel } : {}),
        });
        return EXIT_FOR[outcome.status];
      } finally {
        close();
      }
    },
  );
}
