import { type CommandIo, println } from '../io.js';

/** `--db <url>`, else RELAIS_FLEET_DB; null (after saying so) when neither is given. */
export function fleetDatabase(io: CommandIo, command: string, db: string | undefined): string | null {
  const url = db ?? io.env.RELAIS_FLEET_DB;
  if (url) return url;
  println(
    io.stderr,
    `relais ${command}: no fleet database. Pass --db postgresql://user@host:5432/relais or set RELAIS_FLEET_DB (docs/fleet.md).`,
  );
  return null;
}

export function printFailure(io: CommandIo, failure: { detail: string; fix: string }): void {
  println(io.stderr, failure.detail);
  println(io.stderr, `Fix: ${failure.fix}`);
}
