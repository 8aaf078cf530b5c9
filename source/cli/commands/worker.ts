import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { EngineBus, killAllChildrenNow, parseFleetAccounts, runFleetWorker } from '../../engine/index.js';
import { EXIT } from '../exit-codes.js';
import { type CommandIo, println } from '../io.js';
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
  const bus = new EngineBus();
  bus.subscribe((event) => {
    if (event.type === 'log')
      println(event.level === 'info' ? io.stdout : io.stderr, `[worker] ${event.message}`);
  });
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const ended = await runFleetWorker({
    db,
    executorId: flags.id ?? null,
    workDir: resolve(io.cwd, flags.dir ?? join(homedir(), '.relais', 'fleet')),
    env: io.env,
    concurrency: Math.max(1, Math.floor(flags.concurrency ?? 2)),
    globalConcurrency: flags.globalConcurrency ?? null,
    startsPerMinute: flags.startsPerMinute ?? null,
    accounts: accounts.value,
    signal: controller.signal,
    bus,
  }).catch((error: Error) => {
    println(io.stderr, `relais worker: ${error.message}`);
    return null;
  });
  killAllChildrenNow();
  // A worker that could not start exits at once (its timers must not keep a dead worker alive).
  if (ended === null) process.exit(EXIT.INTERNAL);
  const { exit } = ended;
  // Steps still running belong to the survivors (fenced) or to the restart/takeover (stopped):
  // leave now rather than let them act.
  process.exit(exit === 'fenced' ? EXIT.STOP : EXIT.SUCCESS);
}
