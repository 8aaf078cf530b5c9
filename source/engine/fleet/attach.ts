import type { Pool } from 'pg';
import type { EngineBus, StampedEvent } from '../events.js';
import type { GatePort, GateRequest } from '../gates.js';
import { realClock } from '../supervise/clock.js';
import { approveFleetRun, readFleetSnapshot } from './client.js';
import { readEvents } from './events-log.js';
import type { GateWait } from './gate-wait.js';
import { ensureSchema, openPool, readRun } from './store.js';

/**
 * `relais attach <run>` (issue 20): the full-screen app on a fleet run, wherever it executes. The
 * run's events come from the database (events-log.ts) onto the front end's bus, in order; when the
 * run waits at a gate, the front end's gate port asks it, and the answer goes back as `relais
 * approve` sends it. The run never depends on this: leaving (q, Ctrl-C) stops only the watching,
 * and a gate answered elsewhere meanwhile is withdrawn from the screen.
 *
 * A fleet run is many engine runs, one per phase (phase-step.ts), so a few of their events mean
 * something else here: a step's end at a phase boundary or a gate is not the run's end (dropped);
 * "interrupted" there is a wait (shown as waiting); a gate is shown when the run waits at it, by
 * the gate port, not by the step's request event (dropped, with its "unanswered").
 */

export interface AttachOptions {
  readonly db: string;
  readonly runId: string;
  readonly bus: EngineBus;
  readonly gates: GatePort;
  readonly signal: AbortSignal;
  /** Who answers from here, for the record ("alice (relais attach)"). */
  readonly by: string;
  readonly pollMs?: number;
}

export type AttachOutcome =
  | {
      readonly kind: 'ended';
      readonly status: string;
      readonly state: string;
      readonly detail: string | null;
    }
  | { readonly kind: 'left' }
  | { readonly kind: 'missing'; readonly detail: string };

const TERMINAL_DBOS = ['SUCCESS', 'ERROR', 'CANCELLED', 'MAX_RECOVERY_ATTEMPTS_EXCEEDED'];

export async function attachFleetRun(options: AttachOptions): Promise<AttachOutcome> {
  const pool = await openPool(options.db, 2);
  try {
    await ensureSchema(pool);
    const first = await readRun(pool, options.runId);
    if (!first) return { kind: 'missing', detail: `no fleet run ${options.runId}` };
    options.bus.emit({ type: 'fleet.attached', run_id: options.runId, repo: first.repo });
    return await follow(pool, options);
  } finally {
    await pool.end().catch(() => undefined);
  }
}

async function follow(pool: Pool, options: AttachOptions): Promise<AttachOutcome> {
  const { runId, bus } = options;
  let seq = 0;
  const gate = gateAsker(options);
  try {
    for (;;) {
      if (options.signal.aborted) return { kind: 'left' };
      const events = await readEvents(pool, runId, seq);
      for (const stored of events) {
        seq = stored.seq;
        const shown = asAttached(stored.event);
        if (shown) bus.replay(shown);
      }
      const row = await readRun(pool, runId);
      gate.follow(row?.gate_wait && row.gate_json ? (JSON.parse(row.gate_json) as GateWait) : null);
      if (events.length === 0 && row && (await ended(pool, runId)))
        return { kind: 'ended', status: row.status, state: row.state, detail: row.detail };
      if (events.length === 0) await realClock.sleep(options.pollMs ?? 300, options.signal);
    }
  } finally {
    gate.withdraw();
  }
}

async function ended(pool: Pool, runId: string): Promise<boolean> {
  const { rows } = await pool.query<{ status: string }>(
    'SELECT status FROM dbos.workflow_status WHERE workflow_uuid = $1',
    [runId],
  );
  return TERMINAL_DBOS.includes(rows[0]?.status ?? '');
}

/** The stored event as the attached app should see it, or null when it does not apply (above). */
function asAttached(event: StampedEvent): StampedEvent | null {
  if (event.type === 'run.finished' && (event.status === 'interrupted' || event.reason === 'needs_input'))
    return null;
  if (event.type === 'workflow.changed' && event.status === 'interrupted')
    return { ...event, status: 'waiting' };
  if (event.type === 'gate.resolved' && event.by === 'nobody') return null;
  // The gate on screen is the one the run waits at now, asked through the gate port: a stored
  // request would show a gate no key can answer (its wait may be over, or not asked here yet).
  if (event.type === 'gate.requested') return null;
  return event;
}

/** Asks the front end the gate the run waits at, once per wait; withdraws it when answered elsewhere. */
function gateAsker(options: AttachOptions) {
  let asked: string | null = null;
  let withdraw: AbortController | null = null;
  return {
    follow(wait: GateWait | null) {
      if ((wait?.id ?? null) === asked) return;
      withdraw?.abort();
      asked = wait?.id ?? null;
      if (!wait) return;
      const controller = new AbortController();
      withdraw = controller;
      const request: GateRequest = {
        gate: wait.gate,
        title: wait.title,
        lines: wait.lines,
        answer: wait.answer,
      };
      options.gates.ask(request, AbortSignal.any([controller.signal, options.signal])).then(
        async (answer) => {
          if (answer.by === 'nobody' || controller.signal.aborted) return;
          const sent = await approveFleetRun({
            db: options.db,
            runId: options.runId,
            decision: answer.decision,
            reason: answer.reason ?? null,
            text: answer.text ?? null,
            by: options.by,
          });
          options.bus.emit({
            type: 'log',
            level: sent.ok ? 'info' : 'warn',
            message: sent.ok
              ? `Answered the ${wait.gate} gate: the run goes on in the fleet`
              : `The answer was not sent: ${sent.detail}`,
          });
        },
        () => undefined,
      );
    },
    withdraw() {
      withdraw?.abort();
    },
  };
}

/** `relais fleet status` on a terminal: the fleet's state on the bus, every `intervalMs`, until aborted. */
export async function watchFleet(options: {
  readonly db: string;
  readonly env: NodeJS.ProcessEnv;
  readonly bus: EngineBus;
  readonly signal: AbortSignal;
  readonly intervalMs?: number;
}): Promise<void> {
  const pool = await openPool(options.db, 1);
  try {
    await ensureSchema(pool);
    while (!options.signal.aborted) {
      options.bus.emit({ type: 'fleet.status', snapshot: await readFleetSnapshot(pool, options.env) });
      await realClock.sleep(options.intervalMs ?? 1000, options.signal);
    }
  } finally {
    await pool.end().catch(() => undefined);
  }
}
