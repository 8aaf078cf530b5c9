import type { Pool, PoolClient } from 'pg';
import type { AgentOutcome, AgentRequest, AgentRunner } from '../agents/agent-run.js';
import type { EngineBus } from '../events.js';
import type { callMemo } from './agent-memo.js';
import { fencedTransaction, type Owner } from './fence.js';
import { FLEET_SCHEMA as S } from './settings.js';

/**
 * One fleet-wide budget with a hard stop (issue 20 "Queues and limits"): before each agent call a
 * worker reserves the call's maximum (its --max-budget-usd) in a transaction holding the budget
 * row, so no two workers can both take the last dollars; after the call the reservation is
 * replaced by what the CLI reported.
 *
 * Each call is keyed by run, attempt and call: the attempt is the DBOS execution that owns the
 * run (fence.ts), so a step that runs again after its worker died is a new attempt with keys of
 * its own. What the dead attempt spent stays spent (it was real: releasing it would let the cap be
 * passed by that much). A call the dead attempt had started but never settled is closed when the
 * next attempt starts: it is counted at its reservation, the most it could have cost, because its
 * agent may have gone on spending after its worker died and nobody can say how much; it is marked
 * `abandoned` in the ledger. Every write is fenced by the attempt's owner token: a stalled old
 * attempt cannot reserve, settle or close anything once the run was resumed elsewhere.
 */

export type Reservation = { ok: true } | { ok: false; detail: string };

export interface CallReservation {
  readonly runId: string;
  /** The call's key: attempt, step, n-th call. */
  readonly key: string;
  /** The call's maximum (its --max-budget-usd). */
  readonly usd: number;
  readonly owner?: Owner;
  readonly account?: string | null;
  /** The agent's role (spec, dev, qa, builder...), for the record. */
  readonly role?: string | null;
}

export async function reserve(pool: Pool, call: CallReservation): Promise<Reservation> {
  const { runId, key, usd } = call;
  return fencedTransaction(pool, runId, call.owner ?? null, async (c) => {
    const budget = await c.query<{ cap_usd: string | null; spent_usd: string; reserved_usd: string }>(
      `SELECT cap_usd, spent_usd, reserved_usd FROM ${S}.budget WHERE id = 1 FOR UPDATE`,
    );
    const row = budget.rows[0];
    const previous = await c.query<{ reserved_usd: string; settled: boolean }>(
      `SELECT reserved_usd, settled FROM ${S}.ledger WHERE run_id = $1 AND call_key = $2`,
      [runId, key],
    );
    const old = previous.rows[0];
    // A settled call is spend, never given back; a key is one call of one attempt.
    if (old?.settled) throw new Error(`ledger: call ${runId}/${key} was settled already`);
    // The same unsettled call again (only without an owner to tell attempts apart): replaced.
    const heldBefore = old ? Number(old.reserved_usd) : 0;
    const committed = Number(row?.spent_usd ?? 0) + Number(row?.reserved_usd ?? 0) - heldBefore;
    const cap = row?.cap_usd === null || row?.cap_usd === undefined ? null : Number(row.cap_usd);
    if (cap !== null && committed + usd > cap + 1e-9)
      return {
        ok: false,
        detail: `the fleet budget ($${cap.toFixed(2)}) cannot cover this call's $${usd.toFixed(2)}: $${committed.toFixed(2)} is spent or reserved`,
      };
    await c.query(`UPDATE ${S}.budget SET reserved_usd = reserved_usd - $1 + $2 WHERE id = 1`, [
      heldBefore,
      usd,
    ]);
    await c.query(
      `INSERT INTO ${S}.ledger (run_id, call_key, reserved_usd, attempt, account, role) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (run_id, call_key) DO UPDATE SET reserved_usd = $3, spent_usd = NULL, settled = false, at = now()`,
      [runId, key, usd, call.owner ?? null, call.account ?? null, call.role ?? null],
    );
    return { ok: true };
  });
}

/**
 * The call ended: its reservation becomes what it cost (the reservation stands when it never said).
 * `keep` writes the call's record (agent-memo.ts) in the same transaction: settled and kept, or neither.
 */
export async function settle(
  pool: Pool,
  runId: string,
  key: string,
  spentUsd: number | null,
  owner: Owner = null,
  keep: ((c: PoolClient) => Promise<void>) | null = null,
): Promise<void> {
  await fencedTransaction(pool, runId, owner, async (c) => {
    const held = await c.query<{ reserved_usd: string; settled: boolean }>(
      `SELECT reserved_usd, settled FROM ${S}.ledger WHERE run_id = $1 AND call_key = $2 FOR UPDATE`,
      [runId, key],
    );
    const row = held.rows[0];
    if (!row || row.settled) return;
    const spent = spentUsd ?? Number(row.reserved_usd);
    await c.query(
      `UPDATE ${S}.budget SET reserved_usd = reserved_usd - $1, spent_usd = spent_usd + $2 WHERE id = 1`,
      [row.reserved_usd, spent],
    );
    await c.query(
      `UPDATE ${S}.ledger SET spent_usd = $3, settled = true WHERE run_id = $1 AND call_key = $2`,
      [runId, key, spent],
    );
    await keep?.(c);
  });
}

/**
 * A new attempt of a run starts (owner): every call an earlier attempt left unsettled is closed at
 * its reservation and marked abandoned. Returns how many calls and dollars were closed.
 */
export async function closeAbandoned(
  pool: Pool,
  runId: string,
  owner: Owner,
): Promise<{ calls: number; usd: number }> {
  if (owner === null) return { calls: 0, usd: 0 };
  return fencedTransaction(pool, runId, owner, async (c) => {
    await c.query(`SELECT 1 FROM ${S}.budget WHERE id = 1 FOR UPDATE`);
    const { rows } = await c.query<{ calls: number; usd: number }>(
      `WITH closed AS (
         UPDATE ${S}.ledger SET spent_usd = reserved_usd, settled = true, abandoned = true
         WHERE run_id = $1 AND NOT settled AND attempt IS DISTINCT FROM $2
         RETURNING reserved_usd),
       total AS (SELECT COUNT(*) AS calls, COALESCE(SUM(reserved_usd), 0) AS usd FROM closed),
       moved AS (
         UPDATE ${S}.budget SET reserved_usd = reserved_usd - (SELECT usd FROM total),
           spent_usd = spent_usd + (SELECT usd FROM total)
         WHERE id = 1)
       SELECT calls::int AS calls, usd::float8 AS usd FROM total`,
      [runId, owner],
    );
    return rows[0] ?? { calls: 0, usd: 0 };
  });
}

export async function setBudgetCap(pool: Pool, capUsd: number | null): Promise<void> {
  await pool.query(`UPDATE ${S}.budget SET cap_usd = $1 WHERE id = 1`, [capUsd]);
}

export interface BudgetedCalls {
  readonly pool: Pool;
  readonly runId: string;
  /** The attempt's owner token (fence.ts); null only where no DBOS execution runs (tests). */
  readonly owner: Owner;
  /** Names this step's calls in the ledger ("step3"); with the attempt, a call's key. */
  readonly stepKey: string;
  /** Waits for a slot in the account's rate (accounts.ts); resolves at once without a limit. */
  readonly takeSlot: (account: string, signal: AbortSignal) => Promise<void>;
  /** A call the budget refused: the step stops (the run ends FAILED, budget_exhausted). */
  readonly onRefused: (detail: string) => void;
  /** Finished calls kept and replayed (agent-memo.ts); absent: every call runs live. */
  readonly memo?: ReturnType<typeof callMemo>;
}

/**
 * The agent runners of one step, wrapped: no call starts without its rate slot and its
 * reservation. Every runner wrapped by one of these shares the step's call numbering.
 */
export function budgetedCalls(calls: BudgetedCalls) {
  let count = 0;
  return {
    /** `accountOf`: the model account a request spends on (accounts.ts), for its rate limit. */
    wrap(inner: AgentRunner, accountOf: (request: AgentRequest) => string | null): AgentRunner {
      return {
        async run(request: AgentRequest, bus: EngineBus): Promise<AgentOutcome> {
          // A call that finished on an earlier attempt is replayed: no slot, no reservation, no spend.
          const begun = calls.memo ? await calls.memo.begin(request, bus) : null;
          if (begun?.kind === 'replayed') return begun.outcome;
          const live = begun?.call ?? null;
          count += 1;
          const key = `${calls.owner ?? 'local'}/${calls.stepKey}:${count}`;
          const account = accountOf(request);
          if (account !== null) await calls.takeSlot(account, request.signal);
          if (request.signal.aborted)
            return refusedOutcome("stopped while waiting for the account's rate limit");
          const held = await reserve(calls.pool, {
            runId: calls.runId,
            key,
            usd: request.maxBudgetUsd,
            owner: calls.owner,
            account,
            role: request.role,
          });
          if (!held.ok) {
            calls.onRefused(held.detail);
            return refusedOutcome(held.detail);
          }
          const outcome = await inner.run(live?.request ?? request, bus);
          const spent = outcome.costReported ? outcome.costUsd : null;
          const keep = live ? await live.finish(outcome, key) : null;
          await settle(calls.pool, calls.runId, key, spent, calls.owner, keep);
          return outcome;
        },
      };
    },
  };
}

function refusedOutcome(detail: string): AgentOutcome {
  return {
    text: null,
    failure: detail,
    costUsd: 0,
    costReported: true,
    errorText: detail,
    apiErrorStatus: null,
    permissionDenials: [],
    numTurns: null,
    process: {
      exitCode: null,
      signal: null,
      spawnError: null,
      timedOut: false,
      aborted: true,
      stdoutTail: '',
      stderrTail: '',
      stdoutBytes: 0,
      stderrBytes: 0,
      durationMs: 0,
    },
  };
}
