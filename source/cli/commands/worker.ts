import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseFleetAccounts, runFleetWorker } from '../../engine/index.js';
import { withEngine } from '../engine-session.js';
import { EXIT } from '../exit-codes.js';
import { workerReporter } from '../front-end/worker-reporter.js';
import { type CommandIo, println } from '../io.js';
import { leaveNow } from '../signals.js';
import { fleetDatabase } from './fleet-db.js';

/**
 * `relais worker --db <url> [--id NAME] [--concurrency N] [--account provider=name,...]` (issue 20):
 * executes queued fleet runs until SIGINT/SIGTERM. A worker that loses its lease (another worker
 * took its runs over) kills its agents and exits 1 at once; a supervisor restarts it.
 */
export async function workerCommand(
  io: CommandIo,
  flags: {
    db: string | undefined;
    id: string | undefined;
    dir: string | undefined;
    concurrency: number | undefined;
    globalConcurrency: number | undefined;
    startsPerMinute: number | undefined;
    account: string | undefined;
  },
): Promise<number> {
  const db = fleetDatabase(io, 'worker', flags.db);
  if (!db) return EXIT.USAGE;
  const accounts = parseFleetAccounts(flags.account ?? null);
  if (!accounts.ok) {
    println(
      io.stderr,
      `relais worker: --account ${accounts.problem} (e.g. --account claude=team-a,codex=team-b)`,
    );
    return EXIT.USAGE;
  }
  const code = await withEngine(
    io,
    {
      json: false,
      onInterrupt: 'stopping the worker (its runs go to the other workers)',
      reporter: workerReporter,
    },
    async ({ bus, signal }) => {
      const ended = await runFleetWorker({
        db,
        executorId: flags.id ?? null,
        workDir: resolve(io.cwd, flags.dir ?? join(homedir(), '.relais', 'fleet')),
        env: io.env,
        concurrency: Math.max(1, Math.floor(flags.concurrency ?? 2)),
        globalConcurrency: flags.globalConcurrency ?? null,
        startsPerMinute: flags.startsPerMinute ?? null,
        accounts: accounts.value,
        signal,
        bus,
      }).catch((error: Error) => {
        println(io.stderr, `relais worker: ${error.message}`);
        return null;
      });
      if (ended === null) return EXIT.INTERNAL;
      return ended.exit === 'fenced' ? EXIT.STOP : EXIT.SUCCESS;
    },
  );
  // Leave now rather than let the event loop drain: DBOS's timers would keep a worker that could
  // not start alive, and steps still running belong to the survivors (fenced) or to the restart.
  return leaveNow(code);
}
