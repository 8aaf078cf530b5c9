import { resolve } from 'node:path';
import { realClock, runWorkflow, type WorkflowOutcome } from '../../engine/index.js';
import { withEngine } from '../engine-session.js';
import { EXIT } from '../exit-codes.js';
import { chooseGates } from '../front-end/choose-gates.js';
import type { CommandIo } from '../io.js';

const EXIT_FOR: Record<WorkflowOutcome['status'], number> = {
  completed: EXIT.SUCCESS,
  failed: EXIT.STOP,
  rejected: EXIT.STOP,
  interrupted: EXIT.INTERRUPTED,
  needs_input: EXIT.STOP,
  blocked: EXIT.BLOCKED,
};

/**
 * `ralphy start <project> [--yes] [--json]` (seed 002 §9). Gates are answered by a human at a
 * `[y/n]` prompt on a terminal, approved with `--yes`, and refused when nobody can answer.
 */
export function startCommand(
  io: CommandIo,
  projectArg: string | undefined,
  flags: { json: boolean; yes: boolean },
): Promise<number> {
  const root = resolve(io.cwd, projectArg ?? '.');
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
        });
        return EXIT_FOR[outcome.status];
      } finally {
        close();
      }
    },
  );
}
