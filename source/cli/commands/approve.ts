import { userInfo } from 'node:os';
import { approveFleetRun } from '../../engine/index.js';
import { EXIT } from '../exit-codes.js';
import { type CommandIo, println } from '../io.js';
import { fleetDatabase, printFailure } from './fleet-db.js';

/** `relais approve <run> --yes|--no [--reason TEXT] --db <url>`: answers a fleet run's gate. */
export async function approveCommand(
  io: CommandIo,
  runId: string | undefined,
  flags: { db: string | undefined; yes: boolean; no: boolean; reason: string | undefined },
): Promise<number> {
  if (!runId || flags.yes === flags.no) {
    println(io.stderr, 'relais approve: name the run and say --yes or --no: relais approve <run> --yes');
    return EXIT.USAGE;
  }
  const db = fleetDatabase(io, 'approve', flags.db);
  if (!db) return EXIT.USAGE;
  const result = await approveFleetRun({
    db,
    runId,
    decision: flags.yes ? 'approve' : 'reject',
    reason: flags.reason ?? null,
    by: `${userInfo().username} (relais approve)`,
  });
  if (!result.ok) {
    printFailure(io, result);
    return EXIT.STOP;
  }
  println(io.stdout, `${flags.yes ? 'Approved' : 'Rejected'} the ${result.value.gate} gate of ${runId}.`);
  return EXIT.SUCCESS;
}
