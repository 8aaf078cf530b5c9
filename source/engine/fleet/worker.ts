import { hostname } from 'node:os';
import { join } from 'node:path';
import type { EngineBus } from '../events.js';
import { type GateName, type GateReply, runPhaseStep, type StepResult } from './phase-step.js';
import {
  FLEET_APP_NAME,
  FLEET_APP_VERSION,
  FLEET_QUEUE,
  FLEET_WORKFLOW,
  fleetTunables,
  GATE_TOPIC,
} from './settings.js';
import { ensureDbosSchema, ensureSchema, openPool, updateRun } from './store.js';
import { beat, claimDeadWorker, finishTakeover, markStopped, registerWorker } from './workers.js';

/**
 * `relais worker --db <url>`: one DBOS process executing queued fleet runs. The run is a DBOS
 * workflow; each phase is a step (phase-step.ts); a gate is `DBOS.recv` in the workflow body (a
 * DBOS rule: recv is not allowed inside a step), answered by `relais approve` from any machine.
 * DBOS is imported here, dynamically, so `relais --help` and local runs never load it.
 */

export interface WorkerOptions {
  readonly db: string;
  readonly executorId: string | null;
  readonly workDir: string;
  readonly env: NodeJS.ProcessEnv;
  /** Runs this worker executes at once. */
  readonly concurrency: number;
  /** The fleet-wide cap on runs executing at once (every worker), when set. */
  readonly globalConcurrency: number | null;
  /** Runs started per minute across the fleet (a model account's rate), when set. */
  readonly startsPerMinute: number | null;
  readonly signal: AbortSignal;
  readonly bus: EngineBus;
}

export interface FleetRunResult {
  readonly status: string;
  readonly state: string | null;
  readonly detail: string | null;
  readonly prUrl: string | null;
}

/** A run is a bounded number of phases; more steps than this means the engine is looping. */
const MAX_STEPS = 64;

export async function runFleetWorker(options: WorkerOptions): Promise<{ exit: 'stopped' | 'fenced' }> {
  const { DBOS } = await import('@dbos-inc/dbos-sdk');
  const tunables = fleetTunables(options.env);
  const executorId = options.executorId ?? `${hostname()}-${process.pid}`;
  const log = (message: string, level: 'info' | 'warn' | 'error' = 'info') =>
    options.bus.emit({ type: 'log', level, message: `${new Date().toISOString().slice(11, 23)} ${message}` });
  const pool = await openPool(options.db);
  await ensureSchema(pool);
  await registerWorker(pool, executorId, hostname(), process.pid);
  const deps = {
    pool,
    env: options.env,
    workDir: join(options.workDir, executorId),
    log: (m: string) => log(m),
  };

  const phaseStep = DBOS.registerStep(
    (runId: string, index: number, answers: Partial<Record<GateName, GateReply>>) =>
      runPhaseStep(deps, runId, index, answers),
    { name: 'relaisPhase', retriesAllowed: false },
  );
  const record = DBOS.registerStep(
    async (runId: string, patch: Record<string, string | null>) => updateRun(pool, runId, patch),
    { name: 'relaisRecord', retriesAllowed: true, maxAttempts: 5 },
  );
  DBOS.registerWorkflow(
    async (runId: string, autoApprove: boolean): Promise<FleetRunResult> => {
      await record(runId, { status: 'running', executor_id: DBOS.executorID });
      let answers: Partial<Record<GateName, GateReply>> = {};
      for (let index = 0; index < MAX_STEPS; index++) {
        const result: StepResult = await phaseStep(runId, index, answers);
        answers = {};
        if (result.kind === 'finished') {
          await record(runId, { status: result.status, detail: result.detail, waiting_gate: null });
          return { status: result.status, state: result.state, detail: result.detail, prUrl: result.prUrl };
        }
        if (result.kind === 'gate') {
          answers = { [result.gate]: autoApprove ? autoReply() : await waitForGate(runId, result.gate) };
        }
      }
      await record(runId, { status: 'failed', detail: `more than ${MAX_STEPS} steps` });
      return { status: 'failed', state: null, detail: `more than ${MAX_STEPS} steps`, prUrl: null };
    },
    { name: FLEET_WORKFLOW },
  );

  /** A gate survives every restart: the wait is DBOS's, the message is kept until received. */
  async function waitForGate(runId: string, gate: GateName): Promise<GateReply> {
    await record(runId, { waiting_gate: gate, status: 'waiting' });
    for (;;) {
      const reply = await DBOS.recv<GateReply & { gate?: string }>(GATE_TOPIC, 3600);
      if (reply && (reply.gate === undefined || reply.gate === gate)) {
        await record(runId, { waiting_gate: null, status: 'running' });
        return reply;
      }
    }
  }

  // The heartbeat starts before DBOS launches: a slow launch must not look like a death.
  const lease = holdLease(pool, executorId, tunables, log);
  const stop = new Promise<void>((resolve) => {
    if (options.signal.aborted) resolve();
    options.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  DBOS.setConfig({
    name: FLEET_APP_NAME,
    systemDatabaseUrl: options.db,
    applicationVersion: FLEET_APP_VERSION,
    executorID: executorId,
    runAdminServer: false,
    logLevel: options.env.RELAIS_FLEET_LOG_LEVEL ?? 'warn',
  });
  try {
    await ensureDbosSchema(pool, options.db);
    await DBOS.launch();
  } catch (error) {
    // No DBOS, no worker: the heartbeat must not outlive the launch and pass for a live worker.
    lease.dispose();
    await markStopped(pool, executorId).catch(() => undefined);
    await pool.end().catch(() => undefined);
    throw error;
  }
  await DBOS.registerQueue(FLEET_QUEUE, {
    workerConcurrency: options.concurrency,
    ...(options.globalConcurrency ? { globalConcurrency: options.globalConcurrency } : {}),
    ...(options.startsPerMinute
      ? { rateLimit: { limitPerPeriod: options.startsPerMinute, periodSec: 60 } }
      : {}),
    // One writer per repository: runs of one repository are a partition, one at a time.
    partitionConcurrency: 1,
    minPollingIntervalMs: tunables.pollMs,
    onConflict: 'always_update',
  });
  log(`worker ${executorId} started (application version ${FLEET_APP_VERSION})`);

  async function takeOver(dead: string): Promise<void> {
    const pending = await DBOS.listWorkflows({
      executorId: dead,
      status: 'PENDING',
      workflowName: FLEET_WORKFLOW,
    });
    if (pending.length > 0)
      await DBOS.resumeWorkflows(
        pending.map((w) => w.workflowID),
        { queueName: FLEET_QUEUE },
      );
    await finishTakeover(pool, dead);
    log(`took over ${pending.length} run(s) of dead worker ${dead}`, 'warn');
  }
  // Survivors look for dead workers at the heartbeat's pace, once this one is launched.
  for (;;) {
    if (lease.fenced) break;
    try {
      const dead = await claimDeadWorker(pool, executorId, tunables.deadAfterMs);
      if (dead) await takeOver(dead);
    } catch (error) {
      log(`takeover check failed: ${(error as Error).message}`, 'warn');
    }
    const next = new Promise((r) => setTimeout(r, tunables.heartbeatMs));
    if ((await Promise.race([stop.then(() => 'stop'), lease.lost.then(() => 'stop'), next])) === 'stop')
      break;
  }
  lease.dispose();
  if (lease.fenced) {
    // Another worker owns our runs now: not one more side effect from this process.
    log(`worker ${executorId} lost its lease; stopping at once`, 'error');
    return { exit: 'fenced' };
  }
  await markStopped(pool, executorId).catch(() => undefined);
  await DBOS.shutdown().catch(() => undefined);
  await pool.end().catch(() => undefined);
  return { exit: 'stopped' };
}

interface Lease {
  readonly fenced: boolean;
  /** Resolves when the lease is lost: taken over, or no heartbeat written for deadAfter / 2. */
  readonly lost: Promise<void>;
  dispose(): void;
}

function holdLease(
  pool: import('pg').Pool,
  executorId: string,
  tunables: { heartbeatMs: number; deadAfterMs: number },
  log: (message: string, level?: 'info' | 'warn' | 'error') => void,
): Lease {
  let fenced = false;
  let lastBeat = Date.now();
  let markLost: () => void = () => undefined;
  const lost = new Promise<void>((resolve) => {
    markLost = resolve;
  });
  const fence = () => {
    fenced = true;
    clearInterval(timer);
    markLost();
  };
  let beating = false;
  const timer = setInterval(async () => {
    if (beating || fenced) return;
    beating = true;
    try {
      if (await beat(pool, executorId)) lastBeat = Date.now();
      else fence();
    } catch (error) {
      log(`heartbeat failed: ${(error as Error).message}`, 'warn');
    } finally {
      beating = false;
    }
    if (Date.now() - lastBeat > tunables.deadAfterMs / 2) fence();
  }, tunables.heartbeatMs);
  return {
    get fenced() {
      return fenced;
    },
    lost,
    dispose: () => clearInterval(timer),
  };
}

function autoReply(): GateReply {
  return { decision: 'approve', reason: null, by: 'submit --yes' };
}
