import type { Pool } from 'pg';
import type { AgentOutcome, AgentRequest, AgentRunner } from '../agents/agent-run.js';
import type { EngineBus } from '../events.js';
import { FLEET_SCHEMA as S } from './settings.js';
import { inTransaction } from './store.js';

/**
 * One fleet-wide budget with a hard stop (issue 20 "Queues and limits"): before each agent call a
 * worker reserves the call's maximum (its --max-budget-usd) in a transaction holding the budget
 * row, so no two workers can both take the last dollars; after the call the reservation is
 * replaced by what the CLI reported. Each call has a key (run, step, n-th call of the step): a step
 * that runs again after a kill reserves and settles the same key, never a second entry.
 */

export type Reservation = { ok: true } | { ok: false; detail: string };

export async function reserve(pool: Pool, runId: string, key: string, usd: number): Promise<Reservation> {
  return inTransaction(pool, async (c) => {
    const budget = await c.query<{ cap_usd: string | null; spent_usd: string; reserved_usd: string }>(
      `SELECT cap_usd, spent_usd, reserved_usd FROM ${S}.budget WHERE id = 1 FOR UPDATE`,
    );
    const row = budget.rows[0];
    const previous = await c.query<{ reserved_usd: string; settled: boolean; spent_usd: string | null }>(
      `SELECT reserved_usd, settled, spent_usd FROM ${S}.ledger WHERE run_id = $1 AND call_key = $2`,
      [runId, key],
    );
    const old = previous.rows[0];
    // The same call again (its step re-ran after a kill): what it held is released first.
    const heldBefore = old ? (old.settled ? Number(old.spent_usd ?? 0) : Number(old.reserved_usd)) : 0;
    const committed = Number(row?.spent_usd ?? 0) + Number(row?.reserved_usd ?? 0) - heldBefore;
    const cap = row?.cap_usd === null || row?.cap_usd === undefined ? null : Number(row.cap_usd);
    if (cap !== null && committed + usd > cap + 1e-9)
      return {
        ok: false,
        detail: `the fleet budget ($${cap.toFixed(2)}) cannot cover this call's $${usd.toFixed(2)}: $${committed.toFixed(2)} is spent or reserved`,
      };
    if (old?.settled)
      await c.query(`UPDATE ${S}.budget SET spent_usd = spent_usd - $1 WHERE id = 1`, [heldBefore]);
    else if (old)
      await c.query(`UPDATE ${S}.budget SET reserved_usd = reserved_usd - $1 WHERE id = 1`, [heldBefore]);
    await c.query(`UPDATE ${S}.budget SET reserved_usd = reserved_usd + $1 WHERE id = 1`, [usd]);
    await c.query(
      `INSERT INTO ${S}.ledger (run_id, call_key, reserved_usd) VALUES ($1, $2, $3)
       ON CONFLICT (run_id, call_key) DO UPDATE SET reserved_usd = $3, spent_usd = NULL, settled = false, at = now()`,
      [runId, key, usd],
    );
    return { ok: true };
  });
}

/** The call ended: its reservation becomes what it cost (the reservation stands when it never said). */
export async function settle(pool: Pool, runId: string, key: string, spentUsd: number | null): Promise<void> {
  await inTransaction(pool, async (c) => {
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
  });
}

export async function setBudgetCap(pool: Pool, capUsd: number | null): Promise<void> {
  await pool.query(`UPDATE ${S}.budget SET cap_usd = $1 WHERE id = 1`, [capUsd]);
}

/**
 * The agent runner of one step, wrapped: no call starts without its reservation. A refused call
 * does not run; `onRefused` stops the step (the run ends FAILED, budget_exhausted).
 */
export function budgetedRunner(
  inner: AgentRunner,
  pool: Pool,
  runId: string,
  stepKey: string,
  onRefused: (detail: string) => void,
): AgentRunner {
  let calls = 0;
  return {
    async run(request: AgentRequest, bus: EngineBus): Promise<AgentOutcome> {
      calls += 1;
      const key = `${stepKey}:${calls}`;
      const held = await reserve(pool, runId, key, request.maxBudgetUsd);
      if (!held.ok) {
        onRefused(held.detail);
        return refusedOutcome(held.detail);
      }
      const outcome = await inner.run(request, bus);
      await settle(pool, runId, key, outcome.costReported ? outcome.costUsd : null);
      return outcome;
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
