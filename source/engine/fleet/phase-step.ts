import { join } from 'node:path';
import type { Pool } from 'pg';
import { EngineBus } from '../events.js';
import type { GateAnswer, GatePort } from '../gates.js';
import { roleRoutedRunner } from '../session/agent-runners.js';
import { realClock } from '../supervise/clock.js';
import { runProcess } from '../supervise/run-process.js';
import { runWorkflow } from '../workflow/run-workflow.js';
import { runnerToolEnv } from '../workspace/tool-path.js';
import { budgetedRunner } from './budget.js';
import { checkpoint, restoreCheckout } from './checkout.js';
import { readRun } from './store.js';

/**
 * One DBOS step: one Ralphy phase (seed 002 §8) of one run, executed by the local workflow
 * engine on a checkout re-created from the remote. The step ends at the next phase boundary
 * (the engine is interrupted as it enters the next phase, resumable there), at a gate nobody
 * answered yet (the DBOS workflow then waits on `recv`), or at the end of the workflow.
 */

export type GateName = 'spec' | 'qa';

const AGENT_PHASES = ['PLANNING', 'SPECIFICATION', 'IMPLEMENTATION', 'QA', 'PR'];

export interface GateReply {
  readonly decision: 'approve' | 'reject';
  readonly reason: string | null;
  readonly by: string;
}

export type StepResult =
  | { readonly kind: 'continue'; readonly state: string }
  | { readonly kind: 'gate'; readonly gate: GateName; readonly lines: string[] }
  | {
      readonly kind: 'finished';
      readonly status: string;
      readonly state: string | null;
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
}

export async function runPhaseStep(
  deps: StepDeps,
  runId: string,
  stepIndex: number,
  answers: Partial<Record<GateName, GateReply>>,
): Promise<StepResult> {
  const row = await readRun(deps.pool, runId);
  if (!row)
    return { kind: 'finished', status: 'failed', state: null, detail: `no run ${runId}`, prUrl: null };
  const dir = join(deps.workDir, runId);
  const git = await restoreCheckout({ dir, repo: row.repo, env: deps.env }, row);
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
  let pendingGate: { gate: GateName; lines: string[] } | null = null;
  // Pushes after each judged commit, one at a time, in order.
  let pushes: Promise<void> = Promise.resolve();
  bus.subscribe((event) => {
    if (event.type === 'workflow.changed')
      deps.log(`${runId} step ${stepIndex}: ${event.state} ${event.status}`);
    if (event.type === 'task.updated' && event.verdict === 'verified')
      pushes = pushes.then(() => checkpoint(deps.pool, git, runId, dir)).catch(() => undefined);
  });
  const gates: GatePort = {
    async ask(request) {
      if (request.gate === 'resume') return { decision: 'approve', by: 'auto' };
      const gate = request.gate === 'spec' || request.gate === 'qa' ? request.gate : null;
      const reply = gate ? answers[gate] : undefined;
      if (gate && reply) {
        delete answers[gate];
        // `submit --yes` approves on nobody's behalf: the PR body must not name a human for it.
        const by = reply.by === 'submit --yes' ? 'auto' : 'human';
        return {
          decision: reply.decision,
          by,
          ...(reply.reason ? { reason: reply.reason } : {}),
        } satisfies GateAnswer;
      }
      if (gate) pendingGate = { gate, lines: [request.title, ...request.lines] };
      return { decision: 'reject', by: 'nobody' };
    },
  };
  const outcome = await runWorkflow({
    root: dir,
    bus,
    signal: boundary.signal,
    env: deps.env,
    gates,
    clock: realClock,
    agentRunner: (setup) =>
      budgetedRunner(
        roleRoutedRunner(setup.config, { env: deps.env, root: dir, sandbox: setup.sandbox }),
        deps.pool,
        runId,
        `step${stepIndex}`,
        (detail) => {
          refused = detail;
          boundary.abort();
        },
      ),
    pauseBefore,
    existingPullRequest: (gh, branch) => openPullRequest(gh, branch, dir, deps.env),
  });
  await pushes;
  await checkpoint(deps.pool, git, runId, dir);
  if (refused !== null)
    return {
      kind: 'finished',
      status: 'budget_exhausted',
      state: outcome.state,
      detail: refused,
      prUrl: null,
    };
  if (outcome.status === 'interrupted' && nextPhase !== null) return { kind: 'continue', state: nextPhase };
  const waiting = pendingGate as { gate: GateName; lines: string[] } | null;
  if (outcome.status === 'needs_input' && waiting) return { kind: 'gate', ...waiting };
  return {
    kind: 'finished',
    status: outcome.status,
    state: outcome.state,
    detail: outcome.detail,
    prUrl: outcome.prUrl,
  };
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
