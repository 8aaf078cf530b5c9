import { submitFleetRun } from '../../engine/index.js';
import { EXIT } from '../exit-codes.js';
import { type CommandIo, println } from '../io.js';
import { fleetDatabase, printFailure } from './fleet-db.js';

/** `relais submit <repo> [--prd FILE] [--engine E] [--yes] --db <url>`: enqueues one fleet run. */
export async function submitCommand(
  io: CommandIo,
  repo: string | undefined,
  flags: {
    db: string | undefined;
    prd: string | undefined;
    issue: number | undefined;
    engine: string | undefined;
    parallel: number | undefined;
    yes: boolean;
    json: boolean;
  },
): Promise<number> {
  if (!repo) {
    println(io.stderr, 'relais submit: which repository? relais submit <repo-url-or-path> --db <url>');
    return EXIT.USAGE;
  }
  const db = fleetDatabase(io, 'submit', flags.db);
  if (!db) return EXIT.USAGE;
  const result = await submitFleetRun({
    db,
    repo,
    cwd: io.cwd,
    prdFile: flags.prd ?? null,
    issue: flags.issue ?? null,
    engine: flags.engine ?? null,
    parallel: flags.parallel ?? null,
    yes: flags.yes,
  });
  if (!result.ok) {
    printFailure(io, result);
    return EXIT.USAGE;
  }
  if (flags.json) println(io.stdout, JSON.stringify({ run_id: result.value.runId }));
  else
    println(
      io.stdout,
      `Submitted ${result.value.runId}. Follow it: relais fleet status; answer its gates: relais approve ${result.value.runId} --yes`,
    );
  return EXIT.SUCCESS;
}
