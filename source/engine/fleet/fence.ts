import type { Pool, PoolClient } from 'pg';

/**
 * Fencing a run's writes by the execution that owns it. DBOS gives every execution of a
 * workflow an ownership token (`owner_xid` in its workflow_status row): a worker that resumes a
 * dead worker's run gets a new token, and DBOS itself refuses step records from the old one. The
 * fleet's own writes (the run's row, its ledger, its push intents) check the same token in the
 * same transaction, holding that row's lock until they commit: once a run is resumed elsewhere,
 * nothing the old execution still does reaches the database, however slow or stalled it was.
 */

export class FencedError extends Error {
  constructor(readonly runId: string) {
    super(`run ${runId} belongs to another execution now (a worker resumed it): this one stops`);
  }
}

/** A run's owner as its writes name it: the DBOS execution token, or null (no fence: tests, clients). */
export type Owner = string | null;

/**
 * The token of the execution running `runId` in this process, read inside its workflow or step
 * (DBOS keeps it in the async context; it is not part of DBOS's documented API, so the version of
 * @dbos-inc/dbos-sdk is pinned in package.json).
 */
export async function currentOwner(runId: string): Promise<Owner> {
  const { currentOwnerXid } = await import('@dbos-inc/dbos-sdk/internal/context');
  return currentOwnerXid(runId) ?? null;
}

export async function fencedTransaction<T>(
  pool: Pool,
  runId: string,
  owner: Owner,
  body: (client: PoolClient) => Promise<T>,
): Promise<T> {
  return inTransaction(pool, async (client) => {
    await assertOwner(client, runId, owner);
    return body(client);
  });
}

/** Locks the run's DBOS row until commit (the lock DBOS's own owner check takes) and checks the owner. */
export async function assertOwner(client: PoolClient, runId: string, owner: Owner): Promise<void> {
  if (owner === null) return;
  const { rows } = await client.query<{ owner_xid: string | null }>(
    'SELECT owner_xid FROM dbos.workflow_status WHERE workflow_uuid = $1 FOR NO KEY UPDATE',
    [runId],
  );
  if (rows[0]?.owner_xid !== owner) throw new FencedError(runId);
}

export async function inTransaction<T>(pool: Pool, body: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const value = await body(client);
    await client.query('COMMIT');
    return value;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
