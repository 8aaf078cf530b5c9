import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/**
 * The orchestrator's one proposed task (seed 000 §3.1). Kinds are a discriminated union so the
 * seed's conditionals ("question requires question") hold in zod and in the generated JSON Schema
 * alike, instead of living in a refinement the schema file cannot express.
 */

const identifier = lazySchema(() =>
  z
    .string()
    .min(1)
    .max(80)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._:#/-]*$/, 'ids are letters, digits and . _ : # / - (no spaces)'),
);

const glob = lazySchema(() => z.string().min(1).max(200));

export const taskScopeSchema = lazySchema(() =>
  z.strictObject({
    allowed_globs: z.array(glob).min(1).max(64),
    forbidden_globs: z.array(glob).max(64),
    allow_new_files: z.boolean(),
    allow_lockfile_changes: z.boolean(),
  }),
);

export const diffLimitsSchema = lazySchema(() =>
  z.strictObject({
    max_files_touched: z.int().min(1).max(500),
    max_lines_changed: z.int().min(1).max(20000),
  }),
);

const paramValue = lazySchema(() => z.union([z.string(), z.number(), z.boolean(), z.null()]));

/** Template ids, each at most once per phase (so the worst-case tick is bounded by the templates). */
const templateIds = z
  .array(z.string().min(1).max(64))
  .max(16)
  .refine((ids) => new Set(ids).size === ids.length, 'a template id may appear only once per phase')
  .meta({ uniqueItems: true });

export const taskVerificationSchema = lazySchema(() =>
  z.strictObject({
    fast: templateIds,
    slow: templateIds,
    params: z.record(z.string(), z.record(z.string(), paramValue)).optional(),
  }),
);

export const questionSchema = lazySchema(() =>
  z.strictObject({
    prompt: z.string().min(1).max(2000),
    choices: z.array(z.string().min(1).max(200)).max(12).optional(),
  }),
);

export const claudeCodeBuilderSchema = lazySchema(() =>
  z.strictObject({
    mode: z.literal('claude_code'),
    max_turns: z.int().min(1).max(40),
    instructions: z.string().min(1).max(4000),
  }),
);

/** Seed 001 PR4: the builder is a unified diff, validated path by path and applied by git. */
export const patchBuilderSchema = lazySchema(() =>
  z.strictObject({
    mode: z.literal('patch'),
    max_turns: z.int().min(1).max(40),
    instructions: z.string().min(1).max(4000),
    patch: z.string().min(1).max(500_000),
  }),
);

/** Seed 001 PR5: an external driver (argv from the config) reads TASK.json, writes its result. */
export const cursorBuilderSchema = lazySchema(() =>
  z.strictObject({
    mode: z.literal('cursor'),
    max_turns: z.int().min(1).max(40),
    instructions: z.string().min(1).max(4000),
  }),
);

export const builderSchema = lazySchema(() =>
  z.discriminatedUnion('mode', [claudeCodeBuilderSchema, patchBuilderSchema, cursorBuilderSchema]),
);

/** Seed 001 PR6: a task either carries a builder or a control decision, never both. */
export const controlSchema = lazySchema(() =>
  z.strictObject({
    action: z.enum(['continue', 'stop']),
    reason: z.string().max(400).optional(),
  }),
);

const commonFields = {
  task_id: identifier,
  milestone_id: identifier,
  intent: z.string().min(1).max(1200),
  scope: taskScopeSchema,
  diff_limits: diffLimitsSchema,
  verification: taskVerificationSchema,
};

/**
 * Every kind comes as two strict shapes, one with `builder` and one with `control`: strictness
 * makes the union exclusive (both or neither fail), in zod and in the generated JSON Schema.
 * A question is answered by Claude Code only (seed 000 §3.1).
 */
function kind<K extends string, Q extends z.ZodType, B extends z.ZodType>(
  taskKind: K,
  question: Q,
  builder: B,
) {
  return [
    z.strictObject({ ...commonFields, task_kind: z.literal(taskKind), question, builder }),
    z.strictObject({ ...commonFields, task_kind: z.literal(taskKind), question, control: controlSchema }),
  ] as const;
}

export const taskSchema = lazySchema(() =>
  z.union([
    ...kind('execute', questionSchema.optional(), builderSchema),
    ...kind('verify_only', questionSchema.optional(), builderSchema),
    ...kind('question', questionSchema, claudeCodeBuilderSchema),
  ]),
);

export type BuilderSpec = z.infer<typeof builderSchema>;
export type Control = z.infer<typeof controlSchema>;
export type Task = z.infer<typeof taskSchema>;
export type TaskKind = Task['task_kind'];
export type TaskScope = z.infer<typeof taskScopeSchema>;
export type DiffLimits = z.infer<typeof diffLimitsSchema>;
export type TaskVerification = z.infer<typeof taskVerificationSchema>;

export type BuildTask = Extract<Task, { builder: unknown }>;

export function isBuildTask(task: Task): task is BuildTask {
  return 'builder' in task;
}
