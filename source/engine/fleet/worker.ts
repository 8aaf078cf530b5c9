import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Pool } from 'pg';
import type { EngineBus } from '../events.js';
import { rateWindowSeconds, takeCallSlot } from './accounts.js';
import { currentOwner, FencedError } from './fence.js';
import type { AnsweredGate, GateReply, GateWait } from './gate-wait.js';
import { holdLease, type Lease } from './lease.js';
import { runPhaseStep, type StepDeps, type StepResult } from './phase-step.js';
import { type RunGates, runGates } from './run-gates.js';
import {
  FLEET_APP_NAME,
  FLEET_APP_VERSION,
  FLEET_QUEUE,
  FLEET_WORKFLOW,
  fleetTunables,
  GATE_TOPIC,
} from './settings.js';
import { ensureDbosSchema, ensureSchema, openPool, type RunRow, updateRun } from './store.js';
import { claimDeadWorker, finishTakeover, markStopped, registerWorker } from './workers.js';

/**
 * `relais worker --db <url>`: one DBOS process executing queued fleet runs. The run is a DBOS
 * workflow; each phase is a step (phase-step.ts); a gate is `DBOS.recv` in the workflow body (a
 * DBOS rule: recv is not allowed inside a step), answered by `relais approve`, the attached app or
 * a GitHub comment from any machine (run-gates.ts). DBOS is imported here, dynamically, so
 * `relais --help` and local runs never load it.
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
  /** Runs started per minute across the fleet, when set. */
  readonly startsPerMinute: number | null;
  /** Provider → model account of this machine's logins (`--account claude=team-a`). */
  readonly accounts: ReadonlyMap<string, string>;
  readonly signal: AbortSignal;
  readonly bus: EngineBus;
}

export interface FleetRunResult {
  readonly status: string;
  readonly state: string | null;
  readonly detail: string | null;
  readonly prUrl: string | null;
}

/** A run is a bounded number of phases and gates; more steps than this means the engine is looping. */
const MAX_STEPS = 64;

type Log = (message: string, level?: 'info' | 'warn' | 'error') => void;

export async function runFleetWorker(options: WorkerOptions): Promise<{ exit: 'stopped' | 'fenced' }> {
  const { DBOS } = await import('@dbos-inc/dbos-sdk');
  const tunables = fleetTunables(options.env);
  const executorId = options.executorId ?? `${hostname()}-${process.pid}`;
  const log: Log = (message, level = 'info') =>
    options.bus.emit({ type: 'log', level, message: `${new Date().toISOString().slice(11, 23)} ${message}` });
  const pool = await openPool(options.db);
  // The heartbeat and takeover checks have their own connections: never queued behind the runs'.
  // Bounded: a heartbeat that hangs (a lock, a connection that stopped answering) fails after half
  // the lease and the next one runs; unbounded, it held every later heartbeat back for good, and
  // every push and pull request waiting for the lease with it.
  const leasePool = await openPool(options.db, 2, { statementMs: Math.max(1000, tunables.deadAfterMs / 2) });
  await ensureSchema(pool);
  const generation = await registerWorker(leasePool, executorId, hostname(), process.pid);
  // The heartbeat starts before DBOS launches: a slow launch must not look like a death.
  const lease = holdLease(leasePool, executorId, generation, tunables, log);
  const deps: StepDeps = {
    pool,
    env: options.env,
    workDir: join(options.workDir, executorId),
    log: (m) => log(m),
    leaseReady: () => lease.ready(),
    accounts: options.accounts,
    takeSlot: (account, signal) => takeCallSlot(pool, account, signal, rateWindowSeconds(options.env)),
  };
  registerRunWorkflow(DBOS, deps, runGates({ ...deps, tunables }));
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
    await markStopped(leasePool, executorId, generation).catch(() => undefined);
    await Promise.all([pool.end(), leasePool.end()]).catch(() => undefined);
    throw error;
  }
  // DBOS refuses a worker allowed more runs than the whole fleet: the cap is this worker's too.
  const concurrency = Math.min(options.concurrency, options.globalConcurrency ?? options.concurrency);
  if (concurrency < options.concurrency)
    log(
      `--concurrency ${options.concurrency} is above --global-concurrency ${concurrency}: this worker runs ${concurrency} at once`,
      'warn',
    );
  await DBOS.registerQueue(FLEET_QUEUE, {
    workerConcurrency: concurrency,
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
  await watchForDeadWorkers(DBOS, leasePool, executorId, tunables, lease, stop, log);
  lease.dispose();
  if (lease.fenced) {
    // Another worker owns our runs now: not one more side effect from this process.
    log(`worker ${executorId} lost its lease (its runs were taken over); stopping at once`, 'error');
    return { exit: 'fenced' };
  }
  await markStopped(leasePool, executorId, generation).catch(() => undefined);
  await DBOS.shutdown().catch(() => undefined);
  await Promise.all([pool.end(), leasePool.end()]).catch(() => undefined);
  return { exit: 'stopped' };
}

type Dbos = typeof import('@dbos-inc/dbos-sdk')['DBOS'];

/** The run's workflow: steps, then a durable wait at each gate nobody answered yet. */
function registerRunWorkflow(DBOS: Dbos, deps: StepDeps, gates: RunGates): void {
  const phaseStep = DBOS.registerStep(
    async (runId: string, index: number, answered: AnsweredGate | null, autoApprove: boolean) => {
      try {
        return await runPhaseStep(deps, {
          runId,
          index,
          owner: await currentOwner(runId),
          answered,
          autoApprove,
        });
      } catch (error) {
        // The run was resumed elsewhere: this execution records nothing (DBOS refuses it anyway).
        if (error instanceof FencedError) throw error;
        // Anything else (a clone that fails, a git error) ends the run with what happened, in its
        // row: a step that throws ends the DBOS workflow in ERROR, and the row would still say
        // "running" (fleet status, attach and approve read the row).
        const detail = `the worker could not run step ${index}: ${(error as Error).message}`.slice(0, 2000);
        deps.log(`${runId}: ${detail}`);
        return { kind: 'finished', status: 'failed', state: null, detail, prUrl: null } satisfies StepResult;
      }
    },
    { name: 'relaisPhase', retriesAllowed: false },
  );
  const record = DBOS.registerStep(
    async (runId: string, patch: Partial<RunRow>) =>
      updateRun(deps.pool, runId, patch, await currentOwner(runId)),
    { name: 'relaisRecord', retriesAllowed: true, maxAttempts: 5 },
  );
  const openGate = DBOS.registerStep(gates.open, {
    name: 'relaisGateOpen',
    retriesAllowed: true,
    maxAttempts: 5,
  });
  const announce = DBOS.registerStep(gates.announce, { name: 'relaisGateAnnounce', retriesAllowed: false });
  const comments = DBOS.registerStep(gates.comments, { name: 'relaisGateComments', retriesAllowed: false });

  /** A gate survives every restart: the wait is DBOS's, and a message is kept until received. */
  async function waitForGate(runId: string, wait: GateWait): Promise<GateReply> {
    const opened = await openGate(runId, wait);
    if (opened.thread) await announce(runId, wait);
    for (;;) {
      const pollSeconds = opened.thread ? gates.commentPollSeconds : 3600;
      const reply = await DBOS.recv<GateReply>(GATE_TOPIC, pollSeconds);
      // An answer names its wait: one for an earlier wait, or sent twice, answers nothing here.
      const found =
        reply?.wait === wait.id ? reply : opened.thread ? await comments(runId, wait, opened.since) : null;
      if (found) {
        await record(runId, { waiting_gate: null, gate_wait: null, gate_json: null, status: 'running' });
        return found;
      }
    }
  }

  DBOS.registerWorkflow(
    async (runId: string, autoApprove: boolean): Promise<FleetRunResult> => {
      await record(runId, { status: 'running', executor_id: DBOS.executorID });
      let answered: AnsweredGate | null = null;
      for (let index = 0; index < MAX_STEPS; index++) {
        const result: StepResult = await phaseStep(runId, index, answered, autoApprove);
        const before = answered;
        answered = null;
        if (result.kind === 'gate') {
          const reply = await waitForGate(runId, result.wait);
          const declined = declinedQuestion(result.wait, reply);
          if (declined) {
            await record(runId, { status: 'failed', detail: declined });
            return { status: 'failed', state: 'FAILED', detail: declined, prUrl: null };
          }
          answered = { wait: result.wait, reply };
        }
        if (result.kind === 'finished' && !qaRejectedWithReason(result, before)) {
          await record(runId, { status: result.status, detail: result.detail, waiting_gate: null });
          return { status: result.status, state: result.state, detail: result.detail, prUrl: result.prUrl };
        }
      }
      await record(runId, { status: 'failed', detail: `more than ${MAX_STEPS} steps` });
      return { status: 'failed', state: null, detail: `more than ${MAX_STEPS} steps`, prUrl: null };
    },
    { name: FLEET_WORKFLOW },
  );
}

/** An agent's question rejected (not answered): the run ends there, with who declined and why. */
function declinedQuestion(wait: GateWait, reply: GateReply): string | null {
  if (wait.gate !== 'input' || reply.decision !== 'reject') return null;
  const question = wait.lines.join(' ').slice(0, 300);
  return `${reply.by} declined to answer: ${question}${reply.reason ? ` (${reply.reason})` : ''}`;
}

/**
 * A QA report rejected with a reason: the next step resumes the workflow, which runs QA again
 * with that reason for the QA agent (as a local resume does), then asks the QA gate again.
 * Without a reason the run ends there, rejected at QA.
 */
function qaRejectedWithReason(result: StepResult, answered: AnsweredGate | null): boolean {
  return (
    result.kind === 'finished' &&
    result.reason === 'rejected_at_qa' &&
    answered?.wait.gate === 'qa' &&
    answered.reply.decision === 'reject' &&
    Boolean(answered.reply.reason)
  );
}

/**
 * Survivors look for dead workers at the heartbeat's pace, until this worker stops or loses its
 * lease. A claimed worker's pending runs go back on the queue, from their last completed step.
 */
async function watchForDeadWorkers(
  DBOS: Dbos,
  leasePool: Pool,
  executorId: string,
  tunables: { heartbeatMs: number; deadAfterMs: number },
  lease: Lease,
  stop: Promise<void>,
  log: Log,
): Promise<void> {
  const takeOver = async (dead: string) => {
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
    await finishTakeover(leasePool, dead);
    log(`took over ${pending.length} run(s) of dead worker ${dead}`, 'warn');
  };
  for (;;) {
    if (lease.fenced) return;
    try {
      const dead = await claimDeadWorker(leasePool, executorId, tunables.deadAfterMs);
      if (dead) await takeOver(dead);
    } catch (error) {
      // The claim stands and is claimed again at the next turn (workers.ts): never lost.
      log(`takeover check failed: ${(error as Error).message}`, 'warn');
    }
    const next = new Promise((r) => setTimeout(r, tunables.heartbeatMs));
    if ((await Promise.race([stop.then(() => 'stop'), lease.lost.then(() => 'stop'), next])) === 'stop')
      return;
  }
}
