import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pool } from 'pg';
import type { AgentRunner } from '../agents/agent-run.js';
import { cycleRunners } from '../cycle/runners.js';
import { EngineBus } from '../events.js';
import { splitCycleSection } from '../protocol/cycle-policy.js';
import { roleRoutedRunner } from '../session/agent-runners.js';
import type { TickSetup } from '../session/preflight.js';
import { realClock } from '../supervise/clock.js';
import { runProcess } from '../supervise/run-process.js';
import { runWorkflow } from '../workflow/run-workflow.js';
import { writeFileAtomic } from '../workspace/atomic-write.js';
import { runnerToolEnv } from '../workspace/tool-path.js';
import { accountFor } from './accounts.js';
import { callMemo } from './agent-memo.js';
import { budgetedCalls, closeAbandoned } from './budget.js';
import { type Checkpoint, checkpoint, ForeignPushError, restoreCheckout } from './checkout.js';
import { eventSink } from './events-log.js';
import { FencedError, type Owner } from './fence.js';
import { type AnsweredGate, answerForAgent, type GateWait, stepGates, waitFor } from './gate-wait.js';
import { readRun } from './store.js';

/**
 * One DBOS step: one Ralphy phase (seed 002 §8) of one run, executed by the local workflow
 * engine on a checkout re-created from the remote. The step ends at the next phase boundary
 * (the engine is interrupted as it enters the next phase, resumable there), at a gate nobody
 * answered yet (the DBOS workflow then waits on `recv`, gate-wait.ts), or at the end of the run.
 */

const AGENT_PHASES = ['PLANNING', 'SPECIFICATION', 'IMPLEMENTATION', 'QA', 'PR'];

export type StepResult =
  | { readonly kind: 'continue'; readonly state: string }
  | { readonly kind: 'gate'; readonly wait: GateWait }
  | {
      readonly kind: 'finished';
      readonly status: string;
      readonly state: string | null;
      /** The workflow's failure reason (rejected_at_qa, needs_input...), when it failed. */
      readonly reason?: string | null;
      readonly detail: string | null;
      readonly prUrl: string | null;
    };

export interface StepDeps {
  readonly pool: Pool;
  readonly env: NodeJS.ProcessEnv;
  /** Where this worker keeps its checkouts, one folder per run. */
  readonly workDir: string;
  /** One line per state change of a run, for the worker's log. */
  readonly log: (message: string) => void;
  /** Resolves while the worker surely holds its lease (lease.ts): before a push or a gh call. */
  readonly leaseReady: () => Promise<void>;
  /** The provider → model account map of this worker (`--account`), for rate limits. */
  readonly accounts: ReadonlyMap<string, string>;
  /** Waits for a call slot of a model account (accounts.ts). */
  readonly takeSlot: (account: string, signal: AbortSignal) => Promise<void>;
}

export interface StepInput {
  readonly runId: string;
  readonly index: number;
  /** The DBOS execution that owns the run now (fence.ts). */
  readonly owner: Owner;
  /** The answer the run waited for before this step, if it waited. */
  readonly answered: AnsweredGate | null;
  readonly autoApprove: boolean;
}

export async function runPhaseStep(deps: StepDeps, input: StepInput): Promise<StepResult> {
  const { runId } = input;
  const row = await readRun(deps.pool, runId);
  if (!row)
    return { kind: 'finished', status: 'failed', state: null, detail: `no run ${runId}`, prUrl: null };
  const closed = await closeAbandoned(deps.pool, runId, input.owner);
  if (closed.calls > 0)
    deps.log(
      `${runId}: ${closed.calls} agent call(s) cut off by an earlier attempt counted at their reservation ($${closed.usd.toFixed(2)})`,
    );
  const dir = join(deps.workDir, runId);
  let restored: Awaited<ReturnType<typeof restoreCheckout>>;
  try {
    restored = await restoreCheckout({ dir, repo: row.repo, env: deps.env }, row);
  } catch (error) {
    if (!(error instanceof ForeignPushError)) throw error;
    return { kind: 'finished', status: 'failed', state: row.state, detail: error.message, prUrl: null };
  }
  const answer = input.answered ? answerForAgent(input.answered) : null;
  if (answer) await withPendingAnswer(dir, answer);
  const point: Checkpoint = {
    pool: deps.pool,
    git: restored.git,
    runId,
    dir,
    owner: input.owner,
    leaseReady: deps.leaseReady,
    remoteHead: restored.remoteHead,
  };
  return runEngine(deps, input, row, dir, point);
}

async function runEngine(
  deps: StepDeps,
  input: StepInput,
  row: { issue: number | null; parallel: number | null },
  dir: string,
  point: Checkpoint,
): Promise<StepResult> {
  const { runId } = input;
  const bus = new EngineBus();
  const boundary = new AbortController();
  // One agent phase per step; a gate runs in the step of the phase before it (unanswered: the
  // step ends and the workflow waits on recv) or of the phase after it (answered).
  let ranPhase = false;
  let nextPhase: string | null = null;
  const pauseBefore = (state: string) => {
    if (!AGENT_PHASES.includes(state)) return false;
    if (ranPhase) {
      nextPhase = state;
      return true;
    }
    ranPhase = true;
    return false;
  };
  let refused: string | null = null;
  let pushFailure: Error | null = null;
  // Pushes after each judged commit, one at a time, in order.
  let pushes: Promise<void> = Promise.resolve();
  const events = eventSink(deps.pool, runId, deps.log);
  bus.subscribe((event) => {
    events.push(event);
    if (event.type === 'workflow.changed')
      deps.log(`${runId} step ${input.index}: ${event.state} ${event.status}`);
    if (event.type === 'task.updated' && event.verdict === 'verified')
      pushes = pushes.then(() =>
        checkpoint(point).catch((error: Error) => {
          pushFailure ??= error;
          boundary.abort();
        }),
      );
  });
  const gates = stepGates(input.answered, input.autoApprove);
  const calls = budgetedCalls({
    pool: deps.pool,
    runId,
    owner: input.owner,
    stepKey: `step${input.index}`,
    takeSlot: deps.takeSlot,
    onRefused: (detail) => {
      refused = detail;
      boundary.abort();
    },
    memo: callMemo({ pool: deps.pool, runId, stepKey: `step${input.index}`, root: dir, env: deps.env }),
  });
  const roleRunner = (setup: TickSetup): AgentRunner =>
    calls.wrap(
      roleRoutedRunner(setup.config, { env: deps.env, root: dir, sandbox: setup.sandbox }),
      (request) => accountFor(setup.config, deps.accounts, request),
    );
  const outcome = await runWorkflow({
    root: dir,
    bus,
    signal: boundary.signal,
    env: deps.env,
    gates: gates.port,
    clock: realClock,
    agentRunner: roleRunner,
    cycleRunners: (setup) => {
      const { agents } = splitCycleSection(setup.config.cycle);
      const inner = cycleRunners(agents, setup.config, setup.config.codex_cli, deps.env, dir, setup.sandbox);
      const account = (provider: string) => deps.accounts.get(provider) ?? provider;
      return {
        planner: calls.wrap(inner.planner, () => account(agents.planner.provider)),
        implementer: calls.wrap(inner.implementer, () => account(agents.implementer.provider)),
        verifier: calls.wrap(inner.verifier, () => account(agents.verifier.provider)),
      };
    },
    ...(row.issue !== null ? { issue: row.issue } : {}),
    ...(row.parallel !== null ? { parallel: row.parallel } : {}),
    pauseBefore,
    existingPullRequest: async (gh, branch) => {
      // A pull request is a side effect outside the database: only while the lease is surely held.
      await deps.leaseReady();
      return openPullRequest(gh, branch, dir, deps.env);
    },
  });
  await pushes;
  if (pushFailure === null) await checkpoint(point).catch((error: Error) => (pushFailure = error));
  await events.flush();
  return resultOf(input, outcome, {
    refused,
    pushFailure: pushFailure as Error | null,
    nextPhase: nextPhase as string | null,
    pending: gates.pending(),
  });
}

function resultOf(
  input: StepInput,
  outcome: Awaited<ReturnType<typeof runWorkflow>>,
  ended: {
    refused: string | null;
    pushFailure: Error | null;
    nextPhase: string | null;
    pending: ReturnType<ReturnType<typeof stepGates>['pending']>;
  },
): StepResult {
  const finished = (status: string, detail: string | null, prUrl: string | null = null): StepResult => ({
    kind: 'finished',
    status,
    state: outcome.state,
    reason: outcome.reason,
    detail,
    prUrl,
  });
  if (ended.refused !== null) return finished('budget_exhausted', ended.refused);
  // A foreign push (or a push that cannot land) stops the run: its commits stay in the checkout.
  if (ended.pushFailure !== null) {
    // The run was resumed elsewhere: nothing of this attempt may be recorded, not even its end.
    if (ended.pushFailure instanceof FencedError) throw ended.pushFailure;
    return finished('failed', ended.pushFailure.message);
  }
  if (outcome.status === 'interrupted' && ended.nextPhase !== null)
    return { kind: 'continue', state: ended.nextPhase };
  const waitingForInput = outcome.status === 'needs_input' || outcome.reason === 'needs_input';
  if (waitingForInput && ended.pending)
    return { kind: 'gate', wait: waitFor(ended.pending, `${input.runId}#${input.index}`) };
  return finished(outcome.status, outcome.detail, outcome.prUrl);
}

/** The answer to an agent's question goes to its next run as the workflow's pending answer. */
async function withPendingAnswer(dir: string, answer: string): Promise<void> {
  const file = join(dir, 'relais', 'WORKFLOW.json');
  const text = await readFile(file, 'utf8').catch(() => null);
  if (text === null) return;
  const workflow = JSON.parse(text) as Record<string, unknown>;
  await writeFileAtomic(file, `${JSON.stringify({ ...workflow, pending_answer: answer }, null, 2)}\n`);
}

/**
 * `gh pr list --head <branch> --state open`: the pull request a previous attempt of this step
 * opened, if any. Open ones only: a branch name comes back when a PRD title is reused, and an old
 * merged or closed PR must never stand in for this run's. Through the process port like the PR
 * phase's own gh calls (its whole group ended at the timeout, its output capped), and unsandboxed
 * as they are: gh needs the network and the user's login.
 */
async function openPullRequest(
  gh: string,
  branch: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<string | null> {
  const listed = await runProcess({
    cmd: gh,
    args: ['pr', 'list', '--head', branch, '--state', 'open', '--json', 'url', '--jq', '.[0].url // empty'],
    cwd,
    env: runnerToolEnv(env, cwd),
    timeoutMs: 60_000,
  });
  if (listed.exitCode !== 0) return null;
  return /https?:\/\/\S+/.exec(listed.stdoutTail)?.[0] ?? null;
}
