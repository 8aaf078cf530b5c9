import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { restoreCheckout } from './checkout.js';
import { currentOwner } from './fence.js';
import type { GateReply, GateWait } from './gate-wait.js';
import { announceGate, findGateComment, type GhCall, type Thread, threadOf } from './github-gates.js';
import type { StepDeps } from './phase-step.js';
import type { FleetTunables } from './settings.js';
import { readRun, updateRun } from './store.js';

/**
 * The DBOS steps around a gate's wait (worker.ts holds the wait itself, as `recv`): open it (the
 * run's row says which gate waits, with its id, so `relais approve` and the attached app can
 * answer it), say so on the run's GitHub thread, and read that thread's comments (github-gates.ts).
 * Each is a step, so a restarted workflow replays what they returned instead of doing it again.
 */

export interface RunGates {
  open(runId: string, wait: GateWait): Promise<{ since: string; thread: boolean }>;
  announce(runId: string, wait: GateWait): Promise<void>;
  comments(runId: string, wait: GateWait, since: string): Promise<GateReply | null>;
  /** How often the thread is read while a gate waits. */
  readonly commentPollSeconds: number;
}

export function runGates(deps: StepDeps & { tunables: FleetTunables }): RunGates {
  const { pool } = deps;
  /** The thread and how to call gh on it (in the run's checkout, made again when missing). */
  const ghOn = async (runId: string): Promise<{ thread: Thread; call: GhCall } | null> => {
    const row = await readRun(pool, runId);
    const thread = row ? threadOf(row) : null;
    if (!row || !thread) return null;
    const dir = join(deps.workDir, runId);
    if (!existsSync(join(dir, '.git'))) await restoreCheckout({ dir, repo: row.repo, env: deps.env }, row);
    return { thread, call: { gh: await ghCommand(dir), cwd: dir, env: deps.env } };
  };
  return {
    commentPollSeconds: deps.tunables.commentPollMs / 1000,
    async open(runId, wait) {
      await updateRun(
        pool,
        runId,
        { waiting_gate: wait.gate, gate_wait: wait.id, gate_json: JSON.stringify(wait), status: 'waiting' },
        await currentOwner(runId),
      );
      const { rows } = await pool.query<{ now: Date }>('SELECT now() AS now');
      const row = await readRun(pool, runId);
      return {
        since: (rows[0]?.now ?? new Date()).toISOString(),
        thread: row !== null && threadOf(row) !== null,
      };
    },
    async announce(runId, wait) {
      try {
        const on = await ghOn(runId);
        if (!on) return;
        await deps.leaseReady();
        if (!(await announceGate(on.call, on.thread, runId, wait)))
          deps.log(`${runId}: could not say on GitHub that the ${wait.gate} gate waits`);
      } catch (error) {
        deps.log(
          `${runId}: could not say on GitHub that the ${wait.gate} gate waits: ${(error as Error).message}`,
        );
      }
    },
    async comments(runId, wait, since) {
      try {
        const on = await ghOn(runId);
        return on ? await findGateComment(on.call, on.thread, wait, since) : null;
      } catch {
        // The thread is read again at the next turn.
        return null;
      }
    },
  };
}

async function ghCommand(dir: string): Promise<string> {
  const text = await readFile(join(dir, 'relais.config.json'), 'utf8').catch(() => null);
  if (text === null) return 'gh';
  try {
    const config = JSON.parse(text) as { pr?: { gh_command?: unknown } };
    return typeof config.pr?.gh_command === 'string' && config.pr.gh_command ? config.pr.gh_command : 'gh';
  } catch {
    return 'gh';
  }
}
