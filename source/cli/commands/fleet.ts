import {
  type FleetStatus,
  fleetDoctor,
  fleetStatus,
  setFleetBudget,
  setFleetRate,
  watchFleet,
} from '../../engine/index.js';
import { withEngine } from '../engine-session.js';
import { EXIT } from '../exit-codes.js';
import { chooseFrontEnd } from '../front-end/choose-front-end.js';
import { type CommandIo, println } from '../io.js';
import { fleetDatabase, printFailure } from './fleet-db.js';

type FleetFlags = {
  db: string | undefined;
  json: boolean;
  usd: number | undefined;
  perMinute: number | undefined;
};

/** `relais fleet status|doctor|budget|rate`: the fleet as the database sees it. */
export async function fleetCommand(
  io: CommandIo,
  words: readonly string[],
  flags: FleetFlags,
): Promise<number> {
  const [sub, account] = words;
  if (sub !== 'status' && sub !== 'doctor' && sub !== 'budget' && sub !== 'rate') {
    println(io.stderr, 'relais fleet: say status, doctor, budget or rate (relais fleet --help)');
    return EXIT.USAGE;
  }
  if (sub === 'rate' && (!account || !/^[A-Za-z0-9._@-]{1,100}$/.test(account))) {
    println(io.stderr, 'relais fleet rate: name the account: relais fleet rate claude --per-minute 20');
    return EXIT.USAGE;
  }
  if (sub !== 'rate' && words.length > 1) {
    println(io.stderr, `relais fleet ${sub}: too many arguments: ${words.slice(1).join(' ')}`);
    return EXIT.USAGE;
  }
  const db = fleetDatabase(io, `fleet ${sub}`, flags.db);
  if (!db) return EXIT.USAGE;
  if (sub === 'doctor') return doctor(io, db, flags);
  if (sub === 'budget') return budget(io, db, flags);
  if (sub === 'rate') return rate(io, db, account as string, flags);
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

async function rate(io: CommandIo, db: string, account: string, flags: FleetFlags): Promise<number> {
  const perMinute = flags.perMinute;
  if (perMinute !== undefined && (!Number.isInteger(perMinute) || perMinute < 1)) {
    println(
      io.stderr,
      `relais fleet rate: --per-minute needs a whole number of at least 1 (got ${perMinute})`,
    );
    return EXIT.USAGE;
  }
  const result = await setFleetRate(db, account, perMinute ?? null);
  if (!result.ok) {
    printFailure(io, result);
    return EXIT.STOP;
  }
  println(
    io.stdout,
    perMinute === undefined
      ? `The account ${account} has no rate limit.`
      : `The account ${account} makes at most ${perMinute} agent call(s) a minute, across the fleet.`,
  );
  return EXIT.SUCCESS;
}

async function status(io: CommandIo, db: string, flags: FleetFlags): Promise<number> {
  // On a terminal, the app's fleet view, read again every second until q; else once, as text.
  if (chooseFrontEnd(io, flags.json) === 'ink') return fleetView(io, db);
  const result = await fleetStatus(db, io.env);
  if (!result.ok) {
    printFailure(io, result);
    return EXIT.STOP;
  }
  if (flags.json) println(io.stdout, JSON.stringify(result.value));
  else for (const line of statusLines(result.value)) println(io.stdout, line);
  return EXIT.SUCCESS;
}

async function fleetView(io: CommandIo, db: string): Promise<number> {
  try {
    return await withEngine(
      io,
      { json: false, onInterrupt: 'leaving the fleet view', view: 'fleet', project: 'fleet' },
      async ({ bus, signal }) => {
        await watchFleet({ db, env: io.env, bus, signal });
        return EXIT.SUCCESS;
      },
    );
  } catch (error) {
    printFailure(io, {
      detail: `the fleet database (${db.replace(/(\/\/[^:/@]+):[^@]*@/, '$1:***@')}) answered: ${(error as Error).message}`,
      fix: 'relais fleet doctor --db <url> checks the connection and the schema.',
    });
    return EXIT.STOP;
  }
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
    ...s.accounts.map(
      (a) =>
        `Account ${a.name}: ${a.last_minute} call(s) in the last minute${a.calls_per_minute === null ? ' (no limit)' : ` of ${a.calls_per_minute}`}`,
    ),
    ...s.waitingGates.map(
      (g) =>
        `Waiting: ${g.run_id} at the ${g.gate} gate: ${g.title} (relais approve ${g.run_id} ${g.answer === 'text' ? '--answer "..."' : '--yes|--no'})`,
    ),
    ...s.runs.map(
      (r) =>
        `  ${r.run_id}  ${r.status.padEnd(16)} ${r.state.padEnd(24)} $${r.spent_usd.toFixed(2)}  ${r.pr_url ?? ''}`,
    ),
  ];
}
