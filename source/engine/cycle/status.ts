import { mkdir } from 'node:fs/promises';
import { Git } from '../judge/git.js';
import { readRepoFacts } from '../judge/repo.js';
import { acquireLock } from '../session/index.js';
import {
  type CyclePaths,
  type CycleState,
  cyclePaths,
  freshTask,
  readCycleState,
  writeCycleState,
} from './state.js';

/** `relais cycle --resume`, which ends a pause (what `relais status` shows is in status-lines.ts). */
export type ResumeResult = { ok: true; phase: string } | { ok: false; detail: string };

export interface ResumeOptions {
  /**
   * A human's judgement of the task's LLM: criteria, for a verification that paused for one
   * (CYCLE_VERIFY_NEEDS_HUMAN, CYCLE_VERIFIER_OUTPUT_INVALID). It holds for the current HEAD only.
   */
  readonly verdict?: { readonly answer: 'YES' | 'NO'; readonly reason: string };
  /** The human's answer to the implementer's question, for a cycle paused with CYCLE_NEEDS_INPUT. */
  readonly answer?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/** The pauses a human verdict answers. */
const VERDICT_PAUSES = new Set(['CYCLE_VERIFY_NEEDS_HUMAN', 'CYCLE_VERIFIER_OUTPUT_INVALID']);

/**
 * Ends a pause: back to the phase the cycle paused in, with what that pause needs reset (a stuck
 * task starts afresh, the no-progress count restarts after a human looked, a REPLAN_REQUIRED or
 * REQUEST_SPLIT track goes back to create_plan), and a human verdict recorded when one is given. A running or invalid state is refused, and so is a resume while a
 * cycle holds relais/cycle/lock.json (STATE.json has one writer at a time).
 */
export async function resumeCycle(
  root: string,
  workspaceDir: string,
  options: ResumeOptions = {},
): Promise<ResumeResult> {
  const paths = cyclePaths(root, workspaceDir);
  await mkdir(paths.dir, { recursive: true });
  const lock = await acquireLock(paths.lock, 'relais cycle --resume');
  if (!lock.ok) return { ok: false, detail: `a cycle is running: ${lock.detail}` };
  try {
    return await resumeLocked(root, paths, options);
  } finally {
    await lock.lock.release();
  }
}

async function resumeLocked(root: string, paths: CyclePaths, options: ResumeOptions): Promise<ResumeResult> {
  const read = await readCycleState(paths);
  if (read.kind !== 'ok')
    return {
      ok: false,
      detail: read.kind === 'missing' ? 'no cycle has run yet' : `STATE.json is invalid: ${read.reason}`,
    };
  const s = read.value;
  if (s.phase !== 'needs_human' || !s.needs_human)
    return { ok: false, detail: `the cycle is not paused (phase ${s.phase})` };
  const { code, resume_phase: phase } = s.needs_human;
  let next: CycleState = { ...s, phase, needs_human: null, cycle: { ...s.cycle, status: 'idle' } };
  if (options.verdict) {
    if (!VERDICT_PAUSES.has(code) || s.task.sub_step !== 'verify')
      return { ok: false, detail: `no verification waits for a verdict (the cycle paused for ${code})` };
    const head = await headCommit(root, options.env ?? process.env);
    if (!head.ok) return head;
    next = {
      ...next,
      task: {
        ...next.task,
        human_verdict: {
          answer: options.verdict.answer,
          reason: options.verdict.reason.slice(0, 500) || 'no reason given',
          commit: head.commit,
          at: new Date().toISOString(),
        },
      },
    };
  }
  if (options.answer !== undefined) {
    if (code !== 'CYCLE_NEEDS_INPUT')
      return { ok: false, detail: `no question waits for an answer (the cycle paused for ${code})` };
    const answered = `${s.needs_human.reason}\nThe human answered: ${options.answer.trim()}`.slice(0, 4000);
    next = {
      ...next,
      task: { ...next.task, human_answers: [...next.task.human_answers, answered].slice(-10) },
    };
  }
  if (phase === 'execute') next = { ...next, loop: { ...next.loop, stuck_count: 0, progress_mark: null } };
  // Stuck after a re-plan: the human looked; the task starts again from its packet, re-plan first.
  if (code === 'CYCLE_STUCK')
    next = {
      ...next,
      task: { ...next.task, sub_step: 'generate', retry_count: 0, replan_attempted: false },
    };
  if (REPLAN_PAUSES.has(code) && next.track.id !== null && next.track.spec_path !== null)
    next = replanTrack(next, `${code}: ${s.needs_human.reason}`);
  await writeCycleState(paths, next);
  return { ok: true, phase: next.phase };
}

/** The pauses whose way out is a new plan for the rest of the track (seed 003 generate_task hard stops). */
const REPLAN_PAUSES = new Set(['CYCLE_REPLAN_REQUIRED', 'CYCLE_REQUEST_SPLIT']);

/**
 * Back to create_plan (select-track with no plan): the planner plans the track's remaining tasks
 * from its spec, told why the plan stopped; verified tasks (before task_current) stay done. A
 * track with no spec (another workflow gave its tasks) has nothing to re-plan from: it resumes
 * its task as any pause does.
 */
function replanTrack(state: CycleState, reason: string): CycleState {
  return {
    ...state,
    phase: 'select-track',
    track: { ...state.track, plan_path: null, replan_reason: reason.slice(0, 4000) },
    task: { ...freshTask(state), sub_step: null },
    loop: { ...state.loop, stuck_count: 0, progress_mark: null },
  };
}

async function headCommit(
  root: string,
  env: NodeJS.ProcessEnv,
): Promise<{ ok: true; commit: string } | { ok: false; detail: string }> {
  const git = new Git(root, env);
  const repo = await readRepoFacts(git, root);
  if (!repo.ok) return { ok: false, detail: repo.detail };
  return { ok: true, commit: repo.facts.head };
}
