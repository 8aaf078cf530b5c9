import { lstat } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { splitNul } from '../../judge/git.js';
import { resolvesUnderRoot } from '../../workspace/safe-path.js';
import { askForBlock } from '../agent-call.js';
import { type PlannedTask, parsePlanBlock } from '../blocks.js';
import { testTemplateIds } from '../checks.js';
import type { ActionResult, CycleContext } from '../context.js';
import { commitPaths, existsAt, headOf } from '../git-ops.js';
import { docsForTask, livingDocsDir, parseLoadingMap } from '../mapper/living-docs.js';
import { adaptTaskPrompt } from '../prompts.js';
import type { SentinelResult } from '../sentinel.js';
import type { CycleState } from '../state.js';
import { taskPlanFingerprint } from '../task-fingerprint.js';
import {
  type LoadEntry,
  plannedTaskAt,
  planTaskCount,
  readDoc,
  readPlan,
  renderPacket,
  writePacket,
} from '../track-docs.js';
import type { TrackType } from '../track-types.js';
import { failResult, okResult, pauseResult, projectDocs } from './common.js';

/**
 * Seed 003 generate_task, the JIT task compiler. Happy path (first attempt, no drift): no model
 * call, the plan's task is bound to HEAD and written as a packet. Drift (plan_base_commit != HEAD
 * and a planned modify/delete target is gone), a retry, or a re-plan: one small planner call adapts
 * bindings only; acceptance criteria never change. Hard stops: REPLAN_REQUIRED, REQUEST_SPLIT.
 */

const CONFIG_FILES = ['package.json', 'tsconfig.json', 'pyproject.toml', 'Cargo.toml', 'go.mod', 'Makefile'];

export async function generateTask(ctx: CycleContext, state: CycleState): Promise<ActionResult> {
  const trackId = state.track.id as string;
  const read = await readPlan(ctx, trackId);
  // Deleted or broken by hand: `--resume` has the planner write the track's plan again.
  if (!read.ok) return pauseResult(ctx, state, 'CYCLE_REPLAN_REQUIRED', read.detail);
  const { plan } = read;
  const planned = plannedTaskAt(plan, state.track.task_current);
  if (!planned)
    return pauseResult(
      ctx,
      state,
      'CYCLE_STATE_INCONSISTENT',
      `the plan has no task ${state.track.task_current}`,
    );
  // The plan file is the truth: a human may have edited it (reflect reads the count again).
  const track = { ...state.track, task_count: planTaskCount(plan) };
  const head = await headOf(ctx.git);
  const sameTask = state.task.id === planned.taskId;
  let task = planned;
  let guidance: string | null = null;
  const missing = await missingTargets(ctx, head, task);
  const drifted = state.track.plan_base_commit !== head && missing.length > 0;
  const retry = sameTask && state.task.retry_count > 0;
  const replanned = sameTask && state.task.replan_attempted;
  if (missing.length > 0 && !drifted)
    return pauseResult(ctx, state, 'CYCLE_REPLAN_REQUIRED', `REPLAN_REQUIRED: ${missing.join('; ')}`);
  if (drifted || retry || replanned) {
    const why = [
      ...(drifted ? [`the tree moved since the plan (${missing.join('; ')})`] : []),
      ...(retry || replanned
        ? [`earlier attempts failed: ${state.task.failure_context.slice(-5).join(' | ') || 'no detail'}`]
        : []),
      ...(replanned ? ['this is a re-plan after stuck cycles: regenerate the guidance from scratch'] : []),
    ];
    const adapted = await adapt(ctx, state, planned, why, head);
    if (!adapted.ok) return adapted.result;
    task = adapted.task;
    guidance = adapted.guidance;
  }
  const fingerprint = taskPlanFingerprint(task, guidance);
  const repeated = repeatedPlan(ctx, state, { task, fingerprint, replanned });
  if (repeated) return repeated;
  const load = await filesToLoad(ctx, task, state.track.type);
  const packet = renderPacket({
    task,
    ops: await opsCommands(ctx),
    filesToLoad: load.entries,
    skipped: load.skipped,
    guidance,
    replanRequired: null,
    requestSplit: null,
  });
  const path = await writePacket(ctx, trackId, state.track.task_current, packet);
  await commitPaths(ctx.git, [path], `relais(${task.taskId}): task packet`);
  return okResult(
    {
      ...state,
      track,
      task: {
        ...state.task,
        id: task.taskId,
        description: task.title,
        sub_step: 'implement',
        files_to_load: [...load.entries],
        files: task.files,
        packet_path: path,
        base_commit: null,
        retry_count: sameTask ? state.task.retry_count : 0,
        replan_attempted: sameTask ? state.task.replan_attempted : false,
        failure_context: sameTask ? state.task.failure_context : [],
        plan_fingerprint: fingerprint,
        failed_plans: sameTask ? state.task.failed_plans : [],
      },
    },
    `${path} written${guidance ? ' (bindings adapted by the planner)' : ' (mechanical, no model call)'}`,
  );
}

/**
 * Issue 15: no second attempt at the same task with the same plan. A re-plan that changed nothing
 * (a fingerprint replan_task recorded as failed) escalates now instead of another round of attempts.
 */
function repeatedPlan(
  ctx: CycleContext,
  state: CycleState,
  { task, fingerprint, replanned }: { task: PlannedTask; fingerprint: string; replanned: boolean },
): ActionResult | null {
  if (!replanned || !state.task.failed_plans.includes(fingerprint)) return null;
  return pauseResult(
    ctx,
    state,
    'CYCLE_PLAN_REPEATED',
    `the re-plan of task ${task.taskId} is the plan that already failed (task fingerprint ${fingerprint}): the same files and no new guidance`,
  );
}

type Adapted = { ok: true; task: PlannedTask; guidance: string } | { ok: false; result: ActionResult };

/** The small planner call: new bindings and guidance; identity, summary and acceptance stay verbatim. */
async function adapt(
  ctx: CycleContext,
  state: CycleState,
  planned: PlannedTask,
  why: string[],
  head: string,
): Promise<Adapted> {
  const docs = await projectDocs(ctx, []);
  const answer = await askForBlock(
    ctx,
    'planner',
    adaptTaskPrompt(ctx.nonce, state, planned, why, docs),
    (t) => sameTaskId(planned.taskId, parsePlanBlock(t, ctx.nonce)),
  );
  if (!answer.ok) {
    const code = answer.kind === 'agent' ? 'CYCLE_AGENT_FAILED' : 'CYCLE_PLANNER_OUTPUT_INVALID';
    return { ok: false, result: failResult(state, `planner: ${answer.detail}`, code) };
  }
  const adapted = answer.value.tasks[0] as PlannedTask;
  const limit = ctx.policy.verify.diff_factor * planned.estimatedDiff;
  if (adapted.estimatedDiff > limit) {
    const reason = `REQUEST_SPLIT: the adapted task needs ${adapted.estimatedDiff} lines, more than ${limit} (3x ESTIMATED_DIFF ${planned.estimatedDiff})`;
    return { ok: false, result: pauseResult(ctx, state, 'CYCLE_REQUEST_SPLIT', reason) };
  }
  const task = { ...planned, files: adapted.files };
  const missing = await missingTargets(ctx, head, task);
  if (missing.length > 0) {
    const reason = `REPLAN_REQUIRED after adaptation: ${missing.join('; ')}`;
    return { ok: false, result: pauseResult(ctx, state, 'CYCLE_REPLAN_REQUIRED', reason) };
  }
  return { ok: true, task, guidance: adapted.summary };
}

function sameTaskId(
  taskId: string,
  parsed: SentinelResult<{ tasks: PlannedTask[] }>,
): SentinelResult<{ tasks: PlannedTask[] }> {
  if (!parsed.ok) return parsed;
  if (parsed.value.tasks.length !== 1 || parsed.value.tasks[0]?.taskId !== taskId)
    return {
      ok: false,
      error: { kind: 'malformed', line: null, message: `the block must hold exactly task ${taskId}` },
    };
  return parsed;
}

/** Planned paths that are unsafe, or modify/delete targets that do not exist at HEAD. */
async function missingTargets(ctx: CycleContext, head: string, task: PlannedTask): Promise<string[]> {
  const problems: string[] = [];
  const workspace = ctx.config.workspace_dir;
  for (const file of task.files) {
    if (
      file.path === workspace ||
      file.path.startsWith(`${workspace}/`) ||
      /(^|\/)\.git(\/|$)/.test(file.path)
    ) {
      problems.push(`${file.path} is runner-owned or git-internal`);
      continue;
    }
    if (!(await resolvesUnderRoot(ctx.root, file.path))) {
      problems.push(`${file.path} resolves outside the repository`);
      continue;
    }
    if (file.action !== 'add' && !(await existsAt(ctx.git, head, file.path)))
      problems.push(`${file.path} (${file.action}) does not exist at HEAD`);
  }
  return problems;
}

/** Seed 003 generate_task 4: planned files first, then related tests and configs, within the token cap. */
async function filesToLoad(
  ctx: CycleContext,
  task: PlannedTask,
  trackType: TrackType | null,
): Promise<{ entries: LoadEntry[]; skipped: string[] }> {
  const candidates: LoadEntry[] = [];
  for (const f of task.files.filter((f) => f.action !== 'add'))
    candidates.push({ path: f.path, why: `planned ${f.action} target` });
  candidates.push(...(await livingDocsFor(ctx, task, trackType)));
  const tracked = splitNul(await ctx.git.ok(['ls-files', '-z']));
  const stems = task.files
    .map((f) => basename(f.path, extname(f.path)).toLowerCase())
    .filter((s) => s.length > 2);
  for (const path of tracked) {
    const name = basename(path).toLowerCase();
    const isTest = /(^|\/)(tests?|__tests__|spec)\//.test(path) || /\.(test|spec)\.|^test_/.test(name);
    if (isTest && stems.some((s) => name.includes(s))) candidates.push({ path, why: 'related test' });
  }
  for (const name of CONFIG_FILES)
    if (tracked.includes(name)) candidates.push({ path: name, why: 'project config' });
  const entries: LoadEntry[] = [];
  const skipped: string[] = [];
  let budget = ctx.policy.files_to_load_tokens;
  for (const entry of candidates) {
    if (entries.some((e) => e.path === entry.path)) continue;
    // Regular files inside the repository only: a symlink could pull an outside file into a prompt.
    const info = await lstat(join(ctx.root, entry.path)).catch(() => null);
    if (!info?.isFile() || !(await resolvesUnderRoot(ctx.root, entry.path))) continue;
    const tokens = Math.ceil(info.size / 4);
    if (tokens > budget) {
      skipped.push(entry.path);
      continue;
    }
    budget -= tokens;
    entries.push(entry);
  }
  return { entries, skipped };
}

/**
 * Seed 003 P12: "WORKFLOW.md contains smart loading map (track type -> relevant docs subset)". The
 * living docs the map names for the track's type (and, in the finer rows, for the areas the task's
 * files are in), after the planned files.
 */
async function livingDocsFor(
  ctx: CycleContext,
  task: PlannedTask,
  trackType: TrackType | null,
): Promise<LoadEntry[]> {
  const dir = livingDocsDir(ctx.policy.docs_dir);
  const workflow = await readDoc(ctx.root, `${dir}/WORKFLOW.md`, 40_000);
  if (!workflow) return [];
  const { rows } = parseLoadingMap(workflow);
  return docsForTask(rows, {
    trackType,
    paths: task.files.map((f) => f.path),
  }).map(({ doc, areas }) => ({
    path: `${dir}/${doc}`,
    why: `living doc for ${areas.join(', ')} (WORKFLOW.md loading map)`,
  }));
}

/** OPS.md's command lines, then the configured test and lint templates as argv. */
async function opsCommands(ctx: CycleContext): Promise<string[]> {
  const ops = await readDoc(ctx.root, 'OPS.md', 6000);
  const lines = (ops ?? '')
    .split('\n')
    .filter((l) => /^\s*[-*]\s/.test(l) && l.includes('`'))
    .map((l) => l.replace(/^\s*[-*]\s+/, '').trim())
    .slice(0, 20);
  const templates = new Map(ctx.config.verification.templates.map((t) => [t.id, t]));
  for (const [kind, ids] of [
    ['tests', testTemplateIds(ctx)],
    ['lint', ctx.policy.verify.lint],
  ] as const) {
    for (const id of ids) {
      const t = templates.get(id);
      if (t) lines.push(`${kind}: ${JSON.stringify([t.cmd, ...t.args])} (template ${id})`);
    }
  }
  return lines;
}
