/**
 * The fleet's fixed names and tunables (issue 20). DBOS recovers a workflow only on a worker with
 * the same application version, so the version is pinned here (not taken from package.json: a
 * patch release must not strand the workflows in flight). Change it only with a migration note.
 */

export const FLEET_APP_NAME = 'relais-fleet';
export const FLEET_APP_VERSION = 'relais-fleet-1';
export const FLEET_QUEUE = 'relais-fleet';
export const FLEET_WORKFLOW = 'relaisFleetRun';
export const FLEET_SCHEMA = 'relais_fleet';
/** The DBOS topic a gate waits on; `relais approve` sends to it. */
export const GATE_TOPIC = 'relais.gate';

export interface FleetTunables {
  /** How often a worker writes its heartbeat. */
  readonly heartbeatMs: number;
  /** A worker whose heartbeat is older than this is dead; its side effects outside the database wait after half of it (lease.ts). */
  readonly deadAfterMs: number;
  /** How often the DBOS queue is polled for new work. */
  readonly pollMs: number;
  /** How often a waiting gate reads its run's GitHub thread for an answer. */
  readonly commentPollMs: number;
}

export function fleetTunables(env: NodeJS.ProcessEnv): FleetTunables {
  const number = (name: string, fallback: number) => {
    const value = Number(env[name]);
    return Number.isFinite(value) && value > 0 ? value : fallback;
  };
  const heartbeatMs = number('RELAIS_FLEET_HEARTBEAT_MS', 5000);
  return {
    heartbeatMs,
    deadAfterMs: Math.max(number('RELAIS_FLEET_DEAD_AFTER_MS', 30_000), heartbeatMs * 3),
    pollMs: number('RELAIS_FLEET_POLL_MS', 1000),
    commentPollMs: Math.max(number('RELAIS_FLEET_COMMENT_POLL_MS', 30_000), 100),
  };
}
