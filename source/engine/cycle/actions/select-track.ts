import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { askForBlock } from '../agent-call.js';
import { type PlanBlock, parsePlanBlock, parseSpecBlock, parseTrackBlock } from '../blocks.js';
import { cycleRemediation } from '../codes.js';
import type { ActionResult, CycleContext } from '../context.js';
import { commitPaths, dirtyPaths, headOf } from '../git-ops.js';
import { notify } from '../notifications.js';
import { pickTrackPrompt, planPrompt, type Replan, specPrompt } from '../prompts.js';
import { updateRoadmapStatus } from '../roadmap-status.js';
import type { SentinelResult } from '../sentinel.js';
import { type CycleState, freshTask } from '../state.js';
import {
  plannedTaskAt,
  planTaskCount,
  readDoc,
  readPlan,
  readRepoFile,
  tasksUpTo,
  writePlan,
  writeSpec,
} from '../track-docs.js';
import { failResult, okResult, pauseResult, projectDocs, SEED_DOCS } from './common.js';

/** Seed 003 research and select-track actions: seed_docs, pick_track, create_spec, create_plan. */

/** Human-driven (P2): never generated; needs_human until the four docs and the P2_DONE marker exist. */
export async function seedDocs(ctx: CycleContext, state: CycleState): Promise<ActionResult> {
  // A doc counts when it can be read as the planner will read it: a regular file inside the repository.
  const missing: string[] = [];
  for (const name of SEED_DOCS) {
    const path = `${ctx.policy.docs_dir}/${name}`;
    if (!(await readRepoFile(ctx.root, path))) missing.push(path);
  }
  const marker = await lstat(join(ctx.docsDir, 'P2_DONE')).catch(() => null);
  if (!marker?.isFile()) missing.push(`${ctx.policy.docs_dir}/P2_DONE`);
  if (missing.length === 0)
    return okResult({ ...state, phase: 'select-track' }, 'seed docs present: select-track');
  const reason = `seed docs missing or empty: ${missing.join(', ')}`;
  await notify(
    ctx,
    state,
    'seed_docs',
    {
      title: 'Seed docs needed (P2 brainstorm)',
      lines: [reason],
      // Seed 003 seed_docs 1: "instructing the operator to run the P2 runner" (ours: relais cycle init).
      action: `Run \`relais cycle init\`: it brainstorms ${SEED_DOCS.map((d) => `${ctx.policy.docs_dir}/${d}`).join(', ')} with you and writes them with ${ctx.policy.docs_dir}/P2_DONE once you confirm; then run \`relais cycle\`.`,
    },
    'pause',
  );
  return pauseResult(ctx, state, 'CYCLE_SEED_DOCS_MISSING', reason);
}

function plannerFailed(state: CycleState, detail: { kind: 'agent' | 'parse'; detail: string }): ActionResult {
  return detail.kind === 'agent'
    ? failResult(state, `planner: ${detail.detail}`, 'CYCLE_AGENT_FAILED')
    : failResult(state, `planner: ${detail.detail}`, 'CYCLE_PLANNER_OUTPUT_INVALID');
}

export async function pickTrack(ctx: CycleContext, state: CycleState): Promise<ActionResult> {
  const docs = await projectDocs(ctx, ['ROADMAP.md', 'REQUIREMENTS.md', 'VISION.md', 'PROJECT.md']);
  const answer = await askForBlock(ctx, 'planner', pickTrackPrompt(ctx.nonce, state, docs), (t) =>
    parseTrackBlock(t, ctx.nonce),
  );
  if (!answer.ok) return plannerFailed(state, answer);
  const block = answer.value;
  if (block.kind === 'phase_blocked') {
    await notify(
      ctx,
      state,
      'escalation',
      {
        title: 'Roadmap phase blocked',
        lines: [block.reasons],
        action: cycleRemediation('CYCLE_PHASE_BLOCKED'),
      },
      'pause',
    );
    return pauseResult(ctx, state, 'CYCLE_PHASE_BLOCKED', `phase blocked: ${block.reasons}`);
  }
  if (block.kind === 'phase_complete') return phaseComplete(ctx, state, block.nextPhase);
  const next: CycleState = {
    ...state,
    roadmap: { ...state.roadmap, current_phase: block.phase, unmet: null, declined: null },
    track: {
      ...state.track,
      id: block.id,
      name: block.name,
      phase: block.phase,
      requirements: block.requirements,
      goal: block.goal,
      estimated_tasks: block.estimatedTasks,
      type: block.type,
      status: 'in-progress',
      spec_path: null,
      plan_path: null,
      plan_base_commit: null,
      task_count: 0,
      task_current: 0,
    },
  };
  const gate = await notify(ctx, next, 'new_track', {
    title: `New track starting: ${block.id} — ${block.name}`,
    lines: [
      `goal: ${block.goal}`,
      `phase ${block.phase}, requirements ${block.requirements.join(', ')}`,
      `about ${block.estimatedTasks} task(s)`,
    ],
  });
  // Declined: nothing is selected, so `--resume` asks the planner again (told of the decline).
  if (!gate.approved) {
    const declined = `track ${block.id} (${block.name})`;
    return pauseResult(
      ctx,
      { ...state, roadmap: { ...state.roadmap, declined } },
      'CYCLE_GATE_DECLINED',
      `track ${block.id} was not approved`,
    );
  }
  return okResult(next, `track ${block.id} selected: ${block.name}`);
}

/** PHASE_COMPLETE is checked, not believed: a track of the phase is done and the tree is clean. */
async function phaseComplete(
  ctx: CycleContext,
  state: CycleState,
  nextPhase: string | null,
): Promise<ActionResult> {
  const phase = state.roadmap.current_phase;
  const unmet: string[] = [];
  if (!state.tracks_completed.some((t) => t.phase === phase))
    unmet.push(`no track of phase ${phase ?? '(none)'} is complete`);
  const dirty = await dirtyPaths(ctx.git, ctx.config.workspace_dir);
  if (dirty.length > 0) unmet.push(`the worktree has uncommitted changes (${dirty.slice(0, 5).join(', ')})`);
  // A failed cycle: a planner that keeps claiming it ends the loop (max_consecutive_failures).
  if (unmet.length > 0)
    return failResult(
      { ...state, roadmap: { ...state.roadmap, unmet: unmet.join('; ') } },
      `PHASE_COMPLETE refused: ${unmet.join('; ')}`,
      'CYCLE_PHASE_INCOMPLETE',
    );
  const roadmap = {
    current_phase: nextPhase,
    phases_completed: phase ? [...state.roadmap.phases_completed, phase] : state.roadmap.phases_completed,
    unmet: null,
    declined: null,
  };
  const status = await updateRoadmap(ctx, { ...state, roadmap });
  if (nextPhase === null)
    return okResult(
      { ...state, roadmap, phase: 'complete' },
      `phase ${phase} complete; the roadmap is done${status}`,
    );
  return okResult({ ...state, roadmap }, `phase ${phase} complete; next phase ${nextPhase}${status}`);
}

/**
 * Seed 003 "update ROADMAP status": the status block of ROADMAP.md, committed by the runner. When
 * the file cannot be updated safely (a human's pending edits, broken markers, a symlink), the phase
 * still completes: the update is skipped with a warning, and the next one writes the whole block.
 */
async function updateRoadmap(ctx: CycleContext, state: CycleState): Promise<string> {
  const done = state.roadmap.phases_completed.at(-1) ?? 'phase';
  const update = await updateRoadmapStatus(ctx, state.roadmap, `relais(roadmap): ${done} complete`);
  if (update.ok) return `; ${update.path} ${update.changed ? 'updated' : 'already up to date'}`;
  const message = `${update.path}'s phase status is not updated: ${update.reason}`;
  ctx.bus.emit({ type: 'log', level: 'warn', message });
  await notify(
    ctx,
    state,
    'roadmap',
    {
      title: `${update.path} not updated`,
      lines: [message],
      action: `Fix ${update.path} as said; the next phase completion writes the whole status block again (or add it by hand).`,
    },
    'warn',
  );
  return `; ${update.path} not updated: ${update.reason}`;
}

function forTrack<T extends { trackId: string }>(
  trackId: string,
  parsed: SentinelResult<T>,
): SentinelResult<T> {
  if (!parsed.ok || parsed.value.trackId === trackId) return parsed;
  return {
    ok: false,
    error: {
      kind: 'malformed',
      line: null,
      message: `TRACK_ID is ${parsed.value.trackId}, expected ${trackId}`,
    },
  };
}

export async function createSpec(ctx: CycleContext, state: CycleState): Promise<ActionResult> {
  const trackId = state.track.id as string;
  const docs = await projectDocs(ctx, ['ROADMAP.md', 'REQUIREMENTS.md', 'PROJECT.md']);
  const answer = await askForBlock(ctx, 'planner', specPrompt(ctx.nonce, state, docs), (t) =>
    forTrack(trackId, parseSpecBlock(t, ctx.nonce)),
  );
  if (!answer.ok) return plannerFailed(state, answer);
  const path = await writeSpec(ctx, answer.value);
  await commitPaths(ctx.git, [path], `relais(${trackId}): spec`);
  return okResult(
    { ...state, track: { ...state.track, spec_path: path, status: 'in-progress' } },
    `spec written: ${path}`,
  );
}

export async function createPlan(ctx: CycleContext, state: CycleState): Promise<ActionResult> {
  const trackId = state.track.id as string;
  const docs = await projectDocs(ctx, ['PROJECT.md']);
  const spec = await readDoc(ctx.root, state.track.spec_path as string);
  if (spec) docs[state.track.spec_path as string] = spec;
  const replan = state.track.replan_reason === null ? null : await replanContext(ctx, state);
  const answer = await askForBlock(ctx, 'planner', planPrompt(ctx.nonce, state, docs, replan), (t) =>
    keepsDoneTasks(replan, forTrack(trackId, parsePlanBlock(t, ctx.nonce))),
  );
  if (!answer.ok) return plannerFailed(state, answer);
  // A re-plan plans what is left: the verified tasks keep their numbers (and TASK_NNN.md files).
  const firstTask = (replan?.doneCount ?? 0) + 1;
  const path = await writePlan(ctx, answer.value, firstTask, replan?.verified ?? []);
  await commitPaths(ctx.git, [path], `relais(${trackId}): ${replan ? 're-plan' : 'plan'}`);
  const next: CycleState = {
    ...state,
    phase: 'execute',
    track: {
      ...state.track,
      plan_path: path,
      plan_base_commit: await headOf(ctx.git),
      task_count: firstTask - 1 + answer.value.tasks.length,
      task_current: firstTask,
      status: 'in-progress',
      replan_reason: null,
    },
    task: freshTask(state),
  };
  const count = `${answer.value.tasks.length} task(s)${replan ? `, after the ${replan.doneCount} done` : ''}`;
  return okResult(next, `${replan ? 're-plan' : 'plan'} written: ${path} (${count})`);
}

/**
 * What the planner is told when the track's plan stopped (REPLAN_REQUIRED, REQUEST_SPLIT; set by
 * `--resume`): why, the tasks already verified (numbers before task_current, from the old plan,
 * which carries those done under earlier plans too), and the old plan's tasks from the one it
 * stopped at. The plan file may be gone: then only the count of done tasks.
 */
async function replanContext(ctx: CycleContext, state: CycleState): Promise<Replan> {
  const doneCount = Math.max(0, state.track.task_current - 1);
  const read = await readPlan(ctx, state.track.id as string);
  const old = read.ok ? read.plan : null;
  const verified = old ? tasksUpTo(old, doneCount) : [];
  const left = old
    ? Array.from({ length: planTaskCount(old) - doneCount }, (_, i) => plannedTaskAt(old, doneCount + 1 + i))
    : [];
  const name = (t: { taskId: string; title: string }) => `${t.taskId} "${t.title}"`;
  const doneLine = (n: number) => {
    const task = verified.find((v) => v.n === n);
    return `task ${n}: ${task ? name(task) : 'not in the plan file any more'}`;
  };
  return {
    reason: state.track.replan_reason as string,
    doneCount,
    done: Array.from({ length: doneCount }, (_, i) => doneLine(i + 1)),
    verified,
    previous: left.flatMap((t) => (t ? [name(t)] : [])),
  };
}

/** A re-plan never plans a verified task again under its id (its commits and packet carry it). */
function keepsDoneTasks(replan: Replan | null, parsed: SentinelResult<PlanBlock>): SentinelResult<PlanBlock> {
  if (!parsed.ok || !replan) return parsed;
  const done = new Set(replan.verified.map((v) => v.taskId));
  const again = parsed.value.tasks.filter((t) => done.has(t.taskId)).map((t) => t.taskId);
  if (again.length === 0) return parsed;
  return {
    ok: false,
    error: {
      kind: 'malformed',
      line: null,
      message: `task(s) ${again.join(', ')} are already done: plan only the remaining work, under new TASK_IDs`,
    },
  };
}
