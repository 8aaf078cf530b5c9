import { resolve } from 'node:path';
import { approveAll, denyAll, type GatePort } from '../../engine/gates.js';
import { realClock } from '../../engine/supervise/clock.js';
import { runWorkflow, type WorkflowOutcome } from '../../engine/workflow/run-workflow.js';
import { withEngine } from '../engine-session.js';
import { EXIT } from '../exit-codes.js';
import { promptGates } from '../front-end/prompt-gates.js';
import type { CommandIo } from '../io.js';

const EXIT_FOR: Record<WorkflowOutcome['status'], number> = {
  completed: EXIT.SUCCESS,
  failed: EXIT.STOP,
  rejected: EXIT.STOP,
  interrupted: EXIT.INTERRUPTED,
  blocked: EXIT.BLOCKED,
};

/**
 * `ralphy start <project> [--yes] [--json]` (seed 002 §9). Gates are answered by a human at a
 * `[y/n]` prompt on a terminal, approved with `--yes`, and refused when nobody can answer.
 */
export async function startCommand(
  io: CommandIo,
  projectArg: string | undefined,
  flags: { json: boolean; yes: boolean },
): Promise<number> {
  const root = resolve(io.cwd, projectArg ?? '.');
  const canAsk = io.stdin?.isTTY === true && !io.env.CI && !flags.json;
  let prompt: ReturnType<typeof promptGates> | null = null;
  try {
    return await withEngine(
      io,
      {
        json: flags.json,
        onInterrupt: 'stopping the agent; the workflow can be resumed with ralphy start',
        view: 'workflow',
        project: root,
      },
      async ({ bus, signal, userAbort, appGates }) => {
        // --yes approves; else the app's keys, or a [y/n] prompt on a terminal, or nobody (refused).
        prompt = !flags.yes && !appGates && canAsk && io.stdin ? promptGates(io.stdin, io.stdout) : null;
        const gates: GatePort = flags.yes ? approveAll : (appGates ?? prompt ?? denyAll);
        const outcome = await runWorkflow({
          root,
          bus,
          signal,
          env: io.env,
          gates,
          clock: realClock,
          abortRequested: () => userAbort.aborted,
        });
        return EXIT_FOR[outcome.status];
      },
    );
  } finally {
    (prompt as ReturnType<typeof promptGates> | null)?.close();
  }
}
