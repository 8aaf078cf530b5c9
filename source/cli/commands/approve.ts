import { userInfo } from 'node:os';
import { approveFleetRun } from '../../engine/index.js';
import { EXIT } from '../exit-codes.js';
import { type CommandIo, println } from '../io.js';
import { fleetDatabase, printFailure } from './fleet-db.js';

/**
 * `relais approve <run> --yes|--no [--reason TEXT] | --answer TEXT [--db <url>]`: answers the gate
 * a fleet run waits at, from any machine: yes or no for the spec and QA gates (and a lane's merge
 * gate), a typed answer for a question (the planner's, an agent's); --yes on a question lets the
 * run go on without an answer.
 */
export async function approveCommand(
  io: CommandIo,
  runId: string | undefined,
  flags: {
    db: string | undefined;
    yes: boolean;
    no: boolean;
    reason: string | undefined;
    answer: string | undefined;
  },
): Promise<number> {
  const chosen = [flags.yes, flags.no, flags.answer !== undefined].filter(Boolean).length;
  if (!runId || chosen !== 1) {
    println(
      io.stderr,
      'relais approve: name the run and say one of --yes, --no or --answer "text": relais approve <run> --yes',
    );
    return EXIT.USAGE;
  }
  if (flags.answer !== undefined && flags.answer.trim() === '') {
    println(io.stderr, "relais approve: --answer needs the answer's text");
    return EXIT.USAGE;
  }
  const db = fleetDatabase(io, 'approve', flags.db);
  if (!db) return EXIT.USAGE;
  const decision = flags.answer !== undefined ? 'answer' : flags.yes ? 'approve' : 'reject';
  const result = await approveFleetRun({
    db,
    runId,
    decision,
    reason: flags.reason ?? null,
    text: flags.answer?.trim() ?? null,
    by: `${userInfo().username} (relais approve)`,
  });
  if (!result.ok) {
    printFailure(io, result);
    return EXIT.STOP;
  }
  const verb = decision === 'answer' ? 'Answered' : decision === 'approve' ? 'Approved' : 'Rejected';
  println(io.stdout, `${verb} the ${result.value.gate} gate of ${runId} ("${result.value.title}").`);
  return EXIT.SUCCESS;
}
