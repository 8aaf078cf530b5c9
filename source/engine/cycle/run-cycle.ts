import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Git } from '../judge/git.js';
import { readRepoFacts } from '../judge/repo.js';
import { resolveSandbox, SANDBOX_FIX } from '../sandbox/sandbox.js';
import { acquireLock } from '../session/index.js';
import { reflect, replanTask, retryTask } from './actions/after-verify.js';
import { failResult } from './actions/common.js';
import { escalate, rollbackAndEscalate, summarize } from './actions/escalation.js';
import { generateTask } from './actions/generate-task.js';
import { implementTask } from './actions/implement-task.js';
import { createPlan, createSpec, pickTrack, seedDocs } from './actions/select-track.js';
import { verifyTask } from './actions/verify-task.js';
import { type CycleCode, cycleRemediation } from './codes.js';
import type { ActionResult, CycleContext, CycleOptions } from './context.js';
import { type Decision, decide, stateProblems } from './decide.js';
import { deriveNonce, newCycleId } from './nonce.js';
import { notify } from './notifications.js';
import {
  type CycleAction,
  type CycleState,
  cyclePaths,
  freshState,
  type Phase,
  RECENT_NONCES,
  readCycleState,
  writeCycleState,
} from './state.js';

/**
 * One deadf cycle (seed 003 "Cycle Protocol"): LOAD -> VALIDATE -> DECIDE -> EXECUTE one action ->
 * RECORD -> REPLY. The runner does every deterministic step; models only plan, implement and
 * judge criteria. The cycle holds relais/cycle/lock.json throughout (the seed's flock), and
 * STATE.json is written atomically at VALIDATE (running) and at RECORD.
 */

export type Reply = 'CYCLE_OK' | 'CYCLE_FAIL' | 'DONE';

export interface CycleOutcome {
  readonly reply: Reply;
  readonly action: CycleAction | null;
  readonly phase: Phase | null;
  readonly details: string;
  readonly code: CycleCode | null;
  /**
   * The cycle did not run an action (lock held, state invalid, paused, a dead cycle found). A
   * refusal that waits for a human (paused, state invalid) has phase needs_human.
   */
  readonly refused: boolean;
}

export async function runCycle(options: CycleOptions): Promise<CycleOutcome> {
  const now = options.now ?? (() => new Date());
  const paths = cyclePaths(options.root, options.config.workspace_dir);
  const git = new Git(options.root, options.env);
  const repo = await readRepoFacts(git, options.root);
  if (!repo.ok) return refuse(options, null, 'CYCLE_INTERNAL', repo.detail);
  git.pin(repo.facts.gitDir, repo.facts.commonDir);
  const sandbox = options.sandbox ?? (await resolveSandbox(options.config, repo.facts.root, options.env));
  // Issue 14: nothing runs without the sandbox unless the config says "off".
  if (sandbox.kind === 'unavailable')
    return refuse(options, null, 'BLOCKED_SANDBOX_UNAVAILABLE', `${sandbox.reason}. ${SANDBOX_FIX}`);
  await mkdir(paths.dir, { recursive: true });
  const lock = await acquireLock(paths.lock, 'relais cycle');
  if (!lock.ok) return refuse(options, null, 'CYCLE_LOCK_HELD', lock.detail);
  try {
    return await protocol({
      ...options,
      now,
      sandbox,
      git,
      facts: repo.facts,
      paths,
      docsDir: join(options.root, options.policy.docs_dir),
    });
  } finally {
    await lock.lock.release();
  }
}

/** The context before VALIDATE has chosen the cycle id and its nonce. */
type Unvalidated = Omit<CycleContext, 'cycleId' | 'nonce'> & { readonly cycleId?: string };

async function protocol(base: Unvalidated): Promise<CycleOutcome> {
  // Step 1 LOAD (a missing state is a first run; an unparseable one is never reset).
  const read = await readCycleState(base.paths);
  if (read.kind === 'invalid') {
    const reason = `relais/cycle/STATE.json: ${read.reason}`;
    const notice = {
      title: 'Cycle state invalid',
      lines: [reason],
      action: cycleRemediation('CYCLE_STATE_INVALID'),
    };
    await notify(base, null, 'escalation', notice, 'pause');
    // A pause, not a failure to retry: nothing runs until a human fixes the file (exit 3, end of --loop).
    return refuse(base, 'needs_human', 'CYCLE_STATE_INVALID', reason);
  }
  let state = read.kind === 'ok' ? read.value : freshState(base.now(), base.policy.mode);
  state = {
    ...state,
    mode: base.policy.mode,
    task: { ...state.task, max_retries: base.policy.escalation.max_retries },
  };

  // Step 2 VALIDATE.
  if (state.phase === 'needs_human') {
    const why = state.needs_human;
    return refuse(
      base,
      state.phase,
      'CYCLE_NEEDS_HUMAN',
      why ? `${why.code}: ${why.reason}` : 'needs a human',
    );
  }
  const used = [...state.cycle.recent_nonces, ...(state.cycle.nonce ? [state.cycle.nonce] : [])];
  const cycleId = base.cycleId ?? newCycleId(used);
  const reused = cycleIdProblem(cycleId, state, used);
  if (reused) return refuse(base, state.phase, 'CYCLE_ID_REUSED', reused);
  const ctx: CycleContext = { ...base, cycleId, nonce: deriveNonce(cycleId) };
  if (state.cycle.status === 'running') {
    // We hold the lock, so the cycle that wrote "running" is gone: mark it as ralph.sh would.
    await writeCycleState(ctx.paths, { ...state, cycle: { ...state.cycle, status: 'timed_out' } });
    return refuse(
      ctx,
      state.phase,
      'CYCLE_ALREADY_RUNNING',
      `cycle ${state.cycle.id} was still marked running`,
    );
  }
  const startedAt = ctx.now();
  state = {
    ...state,
    cycle: {
      id: ctx.cycleId,
      nonce: ctx.nonce,
      status: 'running',
      started_at: startedAt.toISOString(),
      finished_at: null,
      recent_nonces: [...state.cycle.recent_nonces, ctx.nonce].slice(-RECENT_NONCES),
    },
  };
  await writeCycleState(ctx.paths, state);
  const budget = await checkBudget(ctx, state);
  state = budget.state;
  ctx.bus.emit({
    type: 'cycle.started',
    cycle_id: ctx.cycleId,
    nonce: ctx.nonce,
    iteration: state.loop.iteration,
    phase: state.phase,
    sub_step: state.task.sub_step,
    mode: state.mode,
  });

  // Step 3 DECIDE.
  const decision = decide({
    state,
    policy: ctx.policy,
    budgetExceeded: budget.exceeded,
    problems: stateProblems(state),
  });
  ctx.bus.emit({
    type: 'cycle.decided',
    action: decision.action,
    row: decision.row,
    reason: decision.reason,
  });

  // Step 4 EXECUTE (one action, never chained).
  let result: ActionResult;
  try {
    result = await execute(ctx, state, decision, budget.exceeded);
  } catch (error) {
    result = failResult(state, `${decision.action} failed: ${(error as Error).message}`, 'CYCLE_INTERNAL');
  }

  // Step 5 RECORD.
  const recorded: CycleState = {
    ...result.state,
    cycle: {
      ...state.cycle,
      status: result.ok ? 'complete' : 'failed',
      finished_at: ctx.now().toISOString(),
    },
    loop: { ...result.state.loop, iteration: state.loop.iteration + 1 },
    last_action: decision.action,
    last_result: { ok: result.ok, details: result.details.slice(0, 4000), code: result.code },
  };
  await writeCycleState(ctx.paths, recorded);

  // Step 6 REPLY.
  const reply: Reply = result.done ? 'DONE' : result.ok ? 'CYCLE_OK' : 'CYCLE_FAIL';
  ctx.bus.emit({
    type: 'cycle.finished',
    cycle_id: ctx.cycleId,
    action: decision.action,
    reply,
    phase: recorded.phase,
    details: result.details,
    code: result.code,
    remediation: result.code ? cycleRemediation(result.code) : null,
  });
  return {
    reply,
    action: decision.action,
    phase: recorded.phase,
    details: result.details,
    code: result.code,
    refused: false,
  };
}

function execute(
  ctx: CycleContext,
  state: CycleState,
  decision: Decision,
  budgetExceeded: boolean,
): Promise<ActionResult> {
  switch (decision.action) {
    case 'seed_docs':
      return seedDocs(ctx, state);
    case 'pick_track':
      return pickTrack(ctx, state);
    case 'create_spec':
      return createSpec(ctx, state);
    case 'create_plan':
      return createPlan(ctx, state);
    case 'generate_task':
      return generateTask(ctx, state);
    case 'implement_task':
      return implementTask(ctx, state);
    case 'verify_task':
      return verifyTask(ctx, state);
    case 'reflect':
      return reflect(ctx, state);
    case 'retry_task':
      return Promise.resolve(retryTask(state));
    case 'replan_task':
      return replanTask(ctx, state);
    case 'rollback_and_escalate':
      return rollbackAndEscalate(ctx, state);
    case 'summarize':
      return summarize(ctx, state);
    case 'escalate':
      return escalate(ctx, state, decision, budgetExceeded);
  }
}

/** Seed 003 VALIDATE 5: the time budget, and the 75% warning (once per run). */
async function checkBudget(
  ctx: CycleContext,
  state: CycleState,
): Promise<{ state: CycleState; exceeded: boolean }> {
  const { max_hours: maxHours, budget_warn_fraction: fraction } = ctx.policy.escalation;
  const hours = (ctx.now().getTime() - Date.parse(state.budget.started_at)) / 3_600_000;
  if (hours >= maxHours) return { state, exceeded: true };
  if (hours >= fraction * maxHours && !state.budget.warned) {
    const line = `${hours.toFixed(1)} of ${maxHours} hours used (${Math.round(fraction * 100)}% warning)`;
    ctx.bus.emit({ type: 'budget.warning', warnings: [line] });
    await notify(ctx, state, 'budget_warn', { title: 'Time budget warning', lines: [line] });
    const warned = { ...state, budget: { ...state.budget, warned: true } };
    await writeCycleState(ctx.paths, warned);
    return { state: warned, exceeded: false };
  }
  return { state, exceeded: false };
}

/**
 * Seed 003 safety rule 7, "never reuse a nonce across cycles": not only the previous cycle's id,
 * but any id whose nonce a recent cycle had (hex ids sharing their first six digits do).
 */
function cycleIdProblem(cycleId: string, state: CycleState, used: readonly string[]): string | null {
  if (!/^[\x21-\x7e]{1,200}$/.test(cycleId))
    return `cycle id "${cycleId.slice(0, 80)}" is not 1-200 printable characters`;
  if (state.cycle.id === cycleId) return `cycle id "${cycleId}" is the previous cycle's`;
  const nonce = deriveNonce(cycleId);
  if (used.includes(nonce)) return `cycle id "${cycleId}" gives nonce ${nonce}, which a recent cycle used`;
  return null;
}

function refuse(
  options: Pick<CycleOptions, 'bus'>,
  phase: Phase | null,
  code: CycleCode,
  details: string,
): CycleOutcome {
  options.bus.emit({
    type: 'cycle.finished',
    cycle_id: null,
    action: null,
    reply: 'CYCLE_FAIL',
    phase: phase ?? 'unknown',
    details,
    code,
    remediation: cycleRemediation(code),
  });
  return { reply: 'CYCLE_FAIL', action: null, phase, details, code, refused: true };
}
