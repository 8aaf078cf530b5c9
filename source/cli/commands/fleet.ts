import { type FleetStatus, fleetDoctor, fleetStatus, setFleetBudget } from '../../engine/index.js';
import { EXIT } from '../exit-codes.js';
import { type CommandIo, println } from '../io.js';
import { fleetDatabase, printFailure } from './fleet-db.js';

type FleetFlags = { db: string | undefined; json: boolean; usd: number | undefined };

/** `relais fleet status|doctor|budget`: the fleet as the database sees it. */
export async function fleetCommand(
  io: CommandIo,
  words: readonly string[],
  flags: FleetFlags,
): Promise<number> {
  const [sub] = words;
  if (sub !== 'status' && sub !== 'doctor' && sub !== 'budget') {
    println(io.stderr, 'relais fleet: say status, doctor or budget (relais fleet --help)');
    return EXIT.USAGE;
  }
  const db = fleetDatabase(io, `fleet ${sub}`, flags.db);
  if (!db) return EXIT.USAGE;
  if (sub === 'doctor') return doctor(io, db, flags);
  if (sub === 'budget') return budget(io, db, flags);
  return status(io, db, flags);
}

async function doctor(io: CommandIo, db: string, flags: FleetFlags): Promise<number> {
  const checks = await fleetDoctor(db, io.env);
  if (flags.json) println(io.stdout, JSON.stringify({ checks }));
  else
    for (const c of checks)
      println(
        io.stdout,
        `${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}${c.fix ? `\n     Fix: ${c.fix}` : ''}`,
      );
  return checks.every((c) => c.ok) ? EXIT.SUCCESS : EXIT.STOP;
}

async function budget(io: CommandIo, db: string, flags: FleetFlags): Promise<number> {
  const result = await setFleetBudget(db, flags.usd ?? null);
  if (!result.ok) {
    printFailure(io, result);
    return EXIT.STOP;
  }
  println(
    io.stdout,
    flags.usd === undefined
      ? 'The fleet budget has no cap.'
      : `The fleet budget is $${flags.usd.toFixed(2)}.`,
  );
  return EXIT.SUCCESS;
}

async function status(io: CommandIo, db: string, flags: FleetFlags): Promise<number> {
  const result = await fleetStatus(db, io.env);
  if (!result.ok) {
    printFailure(io, result);
    return EXIT.STOP;
  }
  if (flags.json) println(io.stdout, JSON.stringify(result.value));
  else for (const line of statusLines(result.value)) println(io.stdout, line);
  return EXIT.SUCCESS;
}

function statusLines(s: FleetStatus): string[] {
  const cap = s.budget.cap_usd === null ? 'no cap' : `cap $${s.budget.cap_usd.toFixed(2)}`;
  const alive = s.workers.filter((w) => w.alive).map((w) => w.executor_id);
  return [
    `Runs: ${
      Object.entries(s.byStatus)
        .map(([k, n]) => `${n} ${k}`)
        .join(', ') || 'none'
    }`,
    `Spend: $${s.budget.spent_usd.toFixed(2)} spent, $${s.budget.reserved_usd.toFixed(2)} reserved (${cap})`,
    `Workers alive: ${alive.join(', ') || 'none'}`,
    ...s.waitingGates.map(
      (g) => `Waiting: ${g.run_id} at the ${g.gate} gate (relais approve ${g.run_id} --yes|--no)`,
    ),
    ...s.runs.map(
      (r) =>
        `  ${r.run_id}  ${r.status.padEnd(16)} ${r.state.padEnd(24)} $${r.spent_usd.toFixed(2)}  ${r.pr_url ?? ''}`,
    ),
  ];
}
