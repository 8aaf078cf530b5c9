import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { z } from 'zod';
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
export const planFileSchema = z.strictObject({
  trackId: z.string(),
  /**
   * The track's number of the first task in `tasks`: a re-plan (REPLAN_REQUIRED, REQUEST_SPLIT)
   * plans only the tasks after the verified ones, which keep their numbers (and TASK_NNN.md files).
   */
  firstTask: z.int().min(1).default(1),
  tasks: z.array(plannedTaskSchema).min(1),
});

export type PlanFile = z.infer<typeof planFileSchema>;

/** The plan's task number `n` of the track (1-based), if the plan holds it. */
export function plannedTaskAt(plan: PlanFile, n: number): PlannedTask | undefined {
  return n >= plan.firstTask ? plan.tasks[n - plan.firstTask] : undefined;
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

export async function writePlan(ctx: DocsPlace, block: PlanBlock, firstTask = 1): Promise<string> {
  const plan: PlanFile = { trackId: block.trackId, firstTask, tasks: block.tasks };
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
          `${firstTask === 2 ? 'Task 1 was' : `Tasks 1 to ${firstTask - 1} were`} done under an earlier plan (see this file's git history).`,
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

const STATUS_OPEN =
  '<!-- relais:phase-status (written by `relais cycle`; replaced when a phase completes) -->';
const STATUS_CLOSE = '<!-- /relais:phase-status -->';

export interface RoadmapProgress {
  readonly phases_completed: readonly string[];
  /** null when the roadmap is finished. */
  readonly current_phase: string | null;
}

/**
 * Seed 003 pick_track 5, PHASE_COMPLETE: "update ROADMAP status". ROADMAP.md is the humans'
 * document, so the runner writes one marked block at its end (replaced on every update, created
 * when absent) and never touches the rest. Returns the repository path written, or null when
 * ROADMAP.md cannot be read as a regular file inside the repository.
 */
export async function writeRoadmapStatus(ctx: DocsPlace, progress: RoadmapProgress): Promise<string | null> {
  const path = rel(ctx, join(ctx.docsDir, 'ROADMAP.md'));
  const text = await readRepoFile(ctx.root, path);
  if (text === null) return null;
  const block = [
    STATUS_OPEN,
    '## Phase status',
    '',
    ...progress.phases_completed.map((p) => `- ${p}: complete`),
    progress.current_phase === null ? '- Roadmap complete.' : `- ${progress.current_phase}: in progress`,
    STATUS_CLOSE,
  ].join('\n');
  const start = text.indexOf(STATUS_OPEN);
  const end = start === -1 ? -1 : text.indexOf(STATUS_CLOSE, start);
  const next =
    end === -1
      ? `${text}${text.endsWith('\n') ? '' : '\n'}\n${block}\n`
      : `${text.slice(0, start)}${block}${text.slice(end + STATUS_CLOSE.length)}`;
  return writeDoc(ctx, join(ctx.docsDir, 'ROADMAP.md'), next);
}
