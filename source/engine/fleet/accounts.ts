import type { Pool } from 'pg';
import type { AgentRequest } from '../agents/agent-run.js';
import type { RelaisConfig } from '../protocol/config.js';
import { realClock } from '../supervise/clock.js';
import { inTransaction } from './fence.js';
import { FLEET_SCHEMA as S } from './settings.js';

/**
 * Rate limits per model account (issue 20 "a rate limit for each model account"). An account is
 * the login an agent call spends on: each worker names, per provider, the account its machine is
 * logged into (`relais worker --account claude=team-a`; without it the provider's name is the
 * account). The rate belongs to the account, in the database (`relais fleet rate team-a
 * --per-minute 20`), so every worker on that account shares it, whatever each was started with.
 * A call takes a slot in a sliding one-minute window under a lock on the account's row; when the
 * window is full it waits for the oldest call to leave it. An account without a rate is unlimited.
 */

/**
 * The window is a minute; RELAIS_FLEET_RATE_WINDOW_MS shortens it (tests: a rate of 2 per 3 s
 * shows the limit without a minute's wait).
 */
export function rateWindowSeconds(env: NodeJS.ProcessEnv): number {
  const ms = Number(env.RELAIS_FLEET_RATE_WINDOW_MS);
  return Number.isFinite(ms) && ms >= 100 ? ms / 1000 : 60;
}

/** `claude=team-a,codex=team-b` → provider → account. Null with the problem when it does not parse. */
export function parseAccounts(
  text: string | null,
): { ok: true; value: Map<string, string> } | { ok: false; problem: string } {
  const value = new Map<string, string>();
  if (text === null || text.trim() === '') return { ok: true, value };
  for (const part of text.split(',')) {
    const match = /^\s*(claude|codex|external)\s*=\s*([A-Za-z0-9._@-]{1,100})\s*$/.exec(part);
    if (!match)
      return {
        ok: false,
        problem: `"${part.trim()}" is not provider=account (providers: claude, codex, external)`,
      };
    value.set(match[1] as string, match[2] as string);
  }
  return { ok: true, value };
}

/** The account a request spends on: its role's provider, mapped by the worker's --account. */
export function accountFor(
  config: RelaisConfig,
  accounts: ReadonlyMap<string, string>,
  request: AgentRequest,
): string {
  const provider = config.agents[request.role]?.provider ?? 'claude';
  return accounts.get(provider) ?? provider;
}

export async function setAccountRate(pool: Pool, account: string, perMinute: number | null): Promise<void> {
  await pool.query(
    `INSERT INTO ${S}.accounts (name, calls_per_minute) VALUES ($1, $2)
     ON CONFLICT (name) DO UPDATE SET calls_per_minute = $2`,
    [account, perMinute],
  );
}

export interface AccountRow {
  readonly name: string;
  readonly calls_per_minute: number | null;
  readonly last_minute: number;
}

export async function listAccounts(pool: Pool, windowSeconds = 60): Promise<AccountRow[]> {
  const { rows } = await pool.query<AccountRow>(
    `SELECT a.name, a.calls_per_minute,
       (SELECT COUNT(*) FROM ${S}.account_calls c WHERE c.account = a.name
          AND c.at > now() - make_interval(secs => $1))::int AS last_minute
     FROM ${S}.accounts a ORDER BY a.name`,
    [windowSeconds],
  );
  return rows;
}

/**
 * Takes one call slot of `account`, waiting while its window is full. Returns at once when the
 * account has no rate, and when `signal` aborts (the caller checks it).
 */
export async function takeCallSlot(
  pool: Pool,
  account: string,
  signal: AbortSignal,
  windowSeconds = 60,
): Promise<void> {
  while (!signal.aborted) {
    const waitMs = await inTransaction(pool, async (c) => {
      const { rows } = await c.query<{ calls_per_minute: number | null }>(
        `SELECT calls_per_minute FROM ${S}.accounts WHERE name = $1 FOR UPDATE`,
        [account],
      );
      const limit = rows[0]?.calls_per_minute ?? null;
      if (limit === null) return 0;
      const window = await c.query<{ used: number; wait_ms: number | null }>(
        `SELECT COUNT(*)::int AS used,
           (EXTRACT(EPOCH FROM (MIN(at) + make_interval(secs => $2) - now())) * 1000)::float8 AS wait_ms
         FROM ${S}.account_calls WHERE account = $1 AND at > now() - make_interval(secs => $2)`,
        [account, windowSeconds],
      );
      const { used, wait_ms } = window.rows[0] ?? { used: 0, wait_ms: null };
      if (used < limit) {
        await c.query(`INSERT INTO ${S}.account_calls (account) VALUES ($1)`, [account]);
        // Old entries are no use to any window: dropped as we go (ten minutes kept, to look back at).
        await c.query(
          `DELETE FROM ${S}.account_calls WHERE account = $1 AND at < now() - make_interval(secs => $2)`,
          [account, Math.max(600, windowSeconds * 2)],
        );
        return 0;
      }
      return Math.max(50, wait_ms ?? 1000);
    });
    if (waitMs === 0) return;
    await realClock.sleep(Math.min(waitMs, 5000), signal);
  }
}
