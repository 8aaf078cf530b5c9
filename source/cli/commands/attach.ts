import { userInfo } from 'node:os';
import { attachFleetRun } from '../../engine/index.js';
import { withEngine } from '../engine-session.js';
import { EXIT } from '../exit-codes.js';
import { chooseGates } from '../front-end/choose-gates.js';
import { type CommandIo, println } from '../io.js';
import { fleetDatabase } from './fleet-db.js';

/**
 * `ralphy attach <run> [--json] [--db <url>]` (issue 20): the full-screen app on a fleet run,
 * whichever worker executes it. Its events come from the database; its gates are answered with
 * the app's keys (or `relais approve` anywhere). Leaving (q, Ctrl-C) leaves the run running.
 * Outside a terminal it prints the run's lines (NDJSON with --json) until the run ends.
 */
export async function attachCommand(
  io: CommandIo,
  runId: string | undefined,
  flags: { db: string | undefined; json: boolean },
): Promise<number> {
  if (!runId) {
    println(io.stderr, 'relais attach: which run? relais attach <run> (relais fleet status lists them)');
    return EXIT.USAGE;
  }
  const db = fleetDatabase(io, 'attach', flags.db);
  if (!db) return EXIT.USAGE;
  return withEngine(
    io,
    {
      json: flags.json,
      onInterrupt: 'leaving; the run goes on in the fleet',
      view: 'workflow',
      project: runId,
    },
    async ({ bus, signal, appGates }) => {
      const { gates, close } = chooseGates(io, { json: flags.json, yes: false, appGates });
      try {
        const outcome = await attachFleetRun({
          db,
          runId,
          bus,
          gates,
          signal,
          by: `${userInfo().username} (relais attach)`,
        });
        if (outcome.kind === 'missing') {
          bus.emit({ type: 'log', level: 'error', message: `Cannot attach: ${outcome.detail}` });
          bus.emit({ type: 'log', level: 'info', message: 'Fix: relais fleet status lists the runs.' });
          return EXIT.USAGE;
        }
        if (outcome.kind === 'left') {
          bus.emit({
            type: 'log',
            level: 'info',
            message: `Left ${runId}: it goes on in the fleet (relais attach ${runId} comes back to it)`,
          });
          return EXIT.SUCCESS;
        }
        return outcome.status === 'completed' ? EXIT.SUCCESS : EXIT.STOP;
      } finally {
        close();
      }
    },
  ).catch((error: Error) => {
    println(io.stderr, `relais attach: ${error.message}`);
    println(io.stderr, 'Fix: relais fleet doctor --db <url> checks the connection and the schema.');
    return EXIT.STOP;
  });
}
