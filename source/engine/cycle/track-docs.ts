import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import * as z from 'zod';
import { readJsonValidated, writeJsonAtomic } from '../workspace/atomic-write.js';
import { resolvesUnderRoot } from '../workspace/safe-path.js';
import { readUntrustedFile } from '../workspace/safe-read.js';
import type { PlanBlock, PlannedTask, SpecBlock } from './blocks.js';
import type { CycleContext } from './context.js';
import { renderTaskFields } from './prompts.js';
import { taskNumber } from './state.js';

/**
 * Track documents for humans under `<docs_dir>/tracks/<track>/` (SPEC.md, PLAN.md,
 * tasks/TASK_NNN.md, ordinary tracked files the runner commits), and the plan the runner works
 * from, zod-validated JSON in relais/cycle/tracks/<track>/plan.json.
 */

const plannedTaskSchema = z.strictObject({
  taskId: z.string().min(1).max(64),
  title: z.string().min(1).max(500),
  summary: z.string().max(20_000),
  files: z.array(
    z.strictObject({
      path: z.string().min(1).max(300),
      action: z.enum(['add', 'modify', 'delete']),
      rationale: z.string().max(2000),
    }),
  ),
  acceptance: z
    .array(z.strictObject({ id: z.string(), text: z.string().max(2000), kind: z.enum(['DET', 'LLM']) }))
    .min(1),
  estimatedDiff: z.int().min(1),
  dependsOn: z.array(z.string()),
});
const doneTaskSchema = z.strictObject({
  n: z.int().min(1),
  taskId: z.string().min(1).max(64),
  title: z.string().min(1).max(500),
});
export const planFileSchema = z.strictObject({
  trackId: z.string(),
  /**
   * The track's number of the first task in `tasks`: a re-plan (REPLAN_REQUIRED, REQUEST_SPLIT)
   * plans only the tasks after the verified ones, which keep their numbers (and TASK_NNN.md files).
   */
  firstTask: z.int().min(1).default(1),
  /**
   * The verified tasks before `firstTask`, carried from plan to plan so that every later re-plan
   * still knows them (and refuses their TASK_IDs). Plans written before it was kept have none.
   */
  done: z.array(doneTaskSchema).default([]),
  tasks: z.array(plannedTaskSchema).min(1),
});

export type PlanFile = z.infer<typeof planFileSchema>;
/** A task done under an earlier plan: its number in the track, id and title. */
export type DoneTask = z.infer<typeof doneTaskSchema>;

/** The plan's task number `n` of the track (1-based), if the plan holds it. */
export function plannedTaskAt(plan: PlanFile, n: number): PlannedTask | undefined {
  return n >= plan.firstTask ? plan.tasks[n - plan.firstTask] : undefined;
}

/**
 * Tasks 1 to `count` of the track as the plan file knows them: the done ones it carries, then its
 * own. A number it does not know (a plan written before `done` was kept) is left out.
 */
export function tasksUpTo(plan: PlanFile, count: number): DoneTask[] {
  return Array.from({ length: count }, (_, i) => i + 1).flatMap((n) => {
    const task = n < plan.firstTask ? plan.done.find((d) => d.n === n) : plannedTaskAt(plan, n);
    return task ? [{ n, taskId: task.taskId, title: task.title }] : [];
  });
}

/** How many tasks the track has by its plan file, the ones done under an earlier plan included. */
export function planTaskCount(plan: PlanFile): number {
  return plan.firstTask - 1 + plan.tasks.length;
}

/** Where track documents and plans live: all a writer of them needs of the cycle. */
export type DocsPlace = Pick<CycleContext, 'root' | 'docsDir' | 'paths'>;

export function trackDir(ctx: DocsPlace, trackId: string): string {
  return join(ctx.docsDir, 'tracks', trackId);
}

export function rel(ctx: DocsPlace, path: string): string {
  return relative(ctx.root, path);
}

async function writeDoc(ctx: DocsPlace, path: string, text: string): Promise<string> {
  if (!(await resolvesUnderRoot(ctx.root, rel(ctx, path))))
    throw new Error(`${path} resolves outside the repository`);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
  return rel(ctx, path);
}

export async function writeSpec(ctx: DocsPlace, spec: SpecBlock): Promise<string> {
  const text = [
    `# SPEC — ${spec.trackId}: ${spec.title}`,
    '',
    '## Overview',
    '',
    spec.overview,
    '',
    '## Requirements',
    '',
    ...spec.requirements.map((r) => `- **${r.id}**: ${r.text}`),
    '',
  ].join('\n');
  return writeDoc(ctx, join(trackDir(ctx, spec.trackId), 'SPEC.md'), text);
}

/** `done`: the verified tasks before `firstTask` (a re-plan), kept in plan.json and listed in PLAN.md. */
export async function writePlan(
  ctx: DocsPlace,
  block: PlanBlock,
  firstTask = 1,
  done: readonly DoneTask[] = [],
): Promise<string> {
  const plan: PlanFile = {
    trackId: block.trackId,
    firstTask,
    done: done.filter((d) => d.n < firstTask),
    tasks: block.tasks,
  };
  const dataDir = join(ctx.paths.tracksData, plan.trackId);
  await mkdir(dataDir, { recursive: true });
  await writeJsonAtomic(join(dataDir, 'plan.json'), planFileSchema, plan);
  const text = [
    `# PLAN — ${plan.trackId}`,
    '',
    `TASK_COUNT=${planTaskCount(plan)}`,
    ...(firstTask > 1
      ? [
          '',
          `${firstTask === 2 ? 'Task 1 was' : `Tasks 1 to ${firstTask - 1} were`} done under an earlier plan (see this file's git history):`,
          ...Array.from({ length: firstTask - 1 }, (_, i) => {
            const d = plan.done.find((t) => t.n === i + 1);
            return `- Task ${i + 1}: ${d ? `${d.taskId} — ${d.title}` : '(not recorded in plan.json)'}`;
          }),
        ]
      : []),
    '',
    ...plan.tasks.flatMap((t, i) => [
      `## Task ${firstTask + i}: ${t.taskId} — ${t.title}`,
      '',
      '```',
      renderTaskFields(t),
      '```',
      '',
    ]),
  ].join('\n');
  return writeDoc(ctx, join(trackDir(ctx, plan.trackId), 'PLAN.md'), text);
}

/** The plan the runner works from, or why it cannot be read (a human may have deleted or edited it). */
export async function readPlan(
  ctx: DocsPlace,
  trackId: string,
): Promise<{ ok: true; plan: PlanFile } | { ok: false; detail: string }> {
  const read = await readJsonValidated(join(ctx.paths.tracksData, trackId, 'plan.json'), planFileSchema);
  if (read.kind === 'ok') return { ok: true, plan: read.value };
  const what = read.kind === 'missing' ? 'missing' : `invalid: ${read.reason}`;
  return { ok: false, detail: `${rel(ctx, ctx.paths.tracksData)}/${trackId}/plan.json is ${what}` };
}

export interface LoadEntry {
  readonly path: string;
  readonly why: string;
}

export interface Packet {
  readonly task: PlannedTask;
  readonly ops: readonly string[];
  readonly filesToLoad: readonly LoadEntry[];
  readonly skipped: readonly string[];
  readonly guidance: string | null;
  readonly replanRequired: string | null;
  readonly requestSplit: string | null;
}

/** Seed 003 "TASK packet format": every section, the plan's fields verbatim. */
export function renderPacket(p: Packet): string {
  const t = p.task;
  return [
    `# TASK — ${t.taskId}`,
    '',
    '## TITLE',
    t.title,
    '',
    '## SUMMARY (verbatim)',
    t.summary,
    ...(p.guidance ? ['', '### RETRY / ADAPTATION GUIDANCE', p.guidance] : []),
    '',
    '## FILES (verbatim)',
    ...t.files.map((f) => `- path=${f.path} | action: ${f.action} | rationale: ${f.rationale}`),
    '',
    '## ACCEPTANCE (verbatim)',
    ...t.acceptance.map((a) => `- ${a.id}: ${a.text}`),
    '',
    '## ESTIMATED_DIFF (verbatim)',
    `ESTIMATED_DIFF=${t.estimatedDiff}`,
    '',
    '## DEPENDS_ON (verbatim)',
    t.dependsOn.length ? t.dependsOn.join(', ') : 'none',
    '',
    '## OPS COMMANDS',
    ...(p.ops.length ? p.ops.map((o) => `- ${o}`) : ['- (none configured)']),
    '',
    '## FILES_TO_LOAD (ordered, capped)',
    ...(p.filesToLoad.length ? p.filesToLoad.map((f) => `- path: ${f.path} | why: ${f.why}`) : ['- (none)']),
    ...(p.skipped.length ? [`- not loaded (over the cap): ${p.skipped.join(', ')}`] : []),
    '',
    '## HARD STOPS / SIGNALS',
    `- REPLAN_REQUIRED: ${p.replanRequired ? `true — ${p.replanRequired}` : 'false'} (print REPLAN_REQUIRED=true if a file to modify or delete is missing)`,
    `- REQUEST_SPLIT: ${p.requestSplit ? `true — ${p.requestSplit}` : 'false'} (print REQUEST_SPLIT=true if the change needs more than 3x ESTIMATED_DIFF)`,
    '',
    '## PLAN FIELDS (machine-readable)',
    '```',
    renderTaskFields(t),
    '```',
    '',
  ].join('\n');
}

export async function writePacket(ctx: DocsPlace, trackId: string, n: number, text: string): Promise<string> {
  return writeDoc(ctx, join(trackDir(ctx, trackId), 'tasks', `TASK_${taskNumber(n)}.md`), text);
}

/** Larger documents are not read at all (a planner prompt is no place for them). */
const MAX_DOC_BYTES = 1024 * 1024;

/**
 * A file of the repository read as untrusted (anyone, an agent included, may have written it): it
 * must resolve inside the repository, a symlink is never followed and a FIFO never blocks
 * (safe-read.ts). `relPath` is relative to `root`; anything unreadable is null.
 */
export async function readRepoFile(
  root: string,
  relPath: string,
  maxBytes = MAX_DOC_BYTES,
): Promise<string | null> {
  if (!(await resolvesUnderRoot(root, relPath))) return null;
  const read = await readUntrustedFile(join(root, relPath), maxBytes);
  return read.ok ? read.text : null;
}

/** A document the planner should see, capped; missing or unsafe files are simply absent. */
export async function readDoc(root: string, relPath: string, maxChars = 12_000): Promise<string | null> {
  const text = await readRepoFile(root, relPath);
  if (text === null) return null;
  return text.length > maxChars ? `${text.slice(0, maxChars)}\n[... cut at ${maxChars} characters]` : text;
}
