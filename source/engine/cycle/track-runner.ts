import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Git } from '../judge/git.js';
import { readRepoFacts } from '../judge/repo.js';
import { acquireLock } from '../session/index.js';
import type { PlannedTask } from './blocks.js';
import type { CycleOptions } from './context.js';
import { commitPaths, headOf } from './git-ops.js';
import { type CycleLoopResult, runCycleLoop } from './loop.js';
import { cyclePaths, freshState, freshTask, readCycleState, writeCycleState } from './state.js';
import { writePlan } from './track-docs.js';
import type { TrackType } from './track-types.js';

/**
 * The cycle as an implementation engine for another workflow (`ralphy start` with
 * `implementation_engine: "cycle"`, docs/ARCHITECTURE.md): the caller already has the tasks, so research and
 * select-track are skipped; the track's plan is written and the cycle runs generate -> implement ->
 * verify -> reflect for each task until the track is complete, a human is needed, or the loop stops.
 * Running it again for the same track resumes where it stopped.
 */

export interface TrackInput {
  readonly id: string;
  readonly name: string;
  readonly goal: string;
  /** Acceptance texts start with "DET: " (checked by stage 1) or "LLM: " (judged by the verifier). */
  readonly tasks: readonly PlannedTask[];
  /** The track's type for the loading map; feature work when not said. */
  readonly type?: TrackType;
}

export type TrackRun = ({ ok: true; completed: boolean } & CycleLoopResult) | { ok: false; detail: string };

export async function runCycleTrack(
  options: Omit<CycleOptions, 'cycleId'>,
  input: TrackInput,
): Promise<TrackRun> {
  const prepared = await prepareTrack(options, input);
  if (!prepared.ok) return prepared;
  const result = await runCycleLoop(options, (o) => o.phase !== 'execute');
  return { ok: true, ...result, completed: result.last?.phase === 'select-track' };
}

async function prepareTrack(
  options: Omit<CycleOptions, 'cycleId'>,
  input: TrackInput,
): Promise<{ ok: true } | { ok: false; detail: string }> {
  if (input.tasks.length === 0) return { ok: false, detail: 'the track has no tasks' };
  const paths = cyclePaths(options.root, options.config.workspace_dir);
  const git = new Git(options.root, options.env);
  const repo = await readRepoFacts(git, options.root);
  if (!repo.ok) return { ok: false, detail: repo.detail };
  git.pin(repo.facts.gitDir, repo.facts.commonDir);
  await mkdir(paths.dir, { recursive: true });
  const lock = await acquireLock(paths.lock, 'relais cycle (track)');
  if (!lock.ok) return { ok: false, detail: lock.detail };
  try {
    const now = options.now ?? (() => new Date());
    const read = await readCycleState(paths);
    if (read.kind === 'invalid')
      return { ok: false, detail: `relais/cycle/STATE.json is invalid: ${read.reason}` };
    const state = read.kind === 'ok' ? read.value : freshState(now(), options.policy.mode);
    if (state.track.id === input.id && state.track.status === 'in-progress' && state.phase !== 'select-track')
      return { ok: true }; // resume the same track
    if (state.phase === 'execute' || state.phase === 'needs_human')
      return { ok: false, detail: `the cycle is busy with track ${state.track.id} (phase ${state.phase})` };
    const place = { root: options.root, paths, docsDir: join(options.root, options.policy.docs_dir) };
    const planPath = await writePlan(place, { trackId: input.id, tasks: [...input.tasks] });
    await commitPaths(git, [planPath], `relais(${input.id}): plan`);
    await writeCycleState(paths, {
      ...state,
      phase: 'execute',
      mode: options.policy.mode,
      track: {
        ...state.track,
        id: input.id,
        name: input.name,
        phase: state.roadmap.current_phase,
        requirements: [],
        goal: input.goal,
        estimated_tasks: input.tasks.length,
        // A PRD's tasks (ralphy start): feature work, for the loading map.
        type: input.type ?? 'feature',
        status: 'in-progress',
        spec_path: null,
        plan_path: planPath,
        plan_base_commit: await headOf(git),
        task_count: input.tasks.length,
        task_current: 1,
      },
      task: freshTask(state),
      loop: { ...state.loop, stuck_count: 0, progress_mark: null },
    });
    return { ok: true };
  } finally {
    await lock.lock.release();
  }
}
