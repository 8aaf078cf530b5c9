import { z } from 'zod';

/**
 * The orchestrator's one proposed task (seed 000 §3.1). Kinds are a discriminated union so the
 * seed's conditionals ("question requires question") hold in zod and in the generated JSON Schema
 * alike, instead of living in a refinement the schema file cannot express.
 */

const identifier = z
  .string()
  .min(1)
  .max(80)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:#/-]*$/, 'ids are letters, digits and . _ : # / - (no spaces)');

const glob = z.string().min(1).max(200);

export const taskScopeSchema = z.strictObject({
  allowed_globs: z.array(glob).min(1).max(64),
  forbidden_globs: z.array(glob).max(64),
  allow_new_files: z.boolean(),
  allow_lockfile_changes: z.boolean(),
});

export const diffLimitsSchema = z.strictObject({
  max_files_touched: z.int().min(1).max(500),
  max_lines_changed: z.int().min(1).max(20000),
});

const paramValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/** Template ids, each at most once per phase (so the worst-case tick is bounded by the templates). */
const templateIds = z
  .array(z.string().min(1).max(64))
  .max(16)
  .refine((ids) => new Set(ids).size === ids.length, 'a template id may appear only once per phase')
  .meta({ uniqueItems: true });

export const taskVerificationSchema = z.strictObject({
  fast: templateIds,
  slow: templateIds,
  params: z.record(z.string(), z.record(z.string(), paramValue)).optional(),
});

export const questionSchema = z.strictObject({
  prompt: z.string().min(1).max(2000),
  choices: z.array(z.string().min(1).max(200)).max(12).optional(),
});

export const claudeCodeBuilderSchema = z.strictObject({
  mode: z.literal('claude_code'),
  max_turns: z.int().min(1).max(40),
  instructions: z.string().min(1).max(4000),
});

const commonFields = {
  task_id: identifier,
  milestone_id: identifier,
  intent: z.string().min(1).max(1200),
  scope: taskScopeSchema,
  diff_limits: diffLimitsSchema,
  verification: taskVerificationSchema,
  builder: claudeCodeBuilderSchema,
};

export const taskSchema = z.discriminatedUnion('task_kind', [
  z.strictObject({ ...commonFields, task_kind: z.literal('execute'), question: questionSchema.optional() }),
  z.strictObject({
    ...commonFields,
    task_kind: z.literal('verify_only'),
    question: questionSchema.optional(),
  }),
  z.strictObject({ ...commonFields, task_kind: z.literal('question'), question: questionSchema }),
]);

export type Task = z.infer<typeof taskSchema>;
export type TaskKind = Task['task_kind'];
export type TaskScope = z.infer<typeof taskScopeSchema>;
export type DiffLimits = z.infer<typeof diffLimitsSchema>;
export type TaskVerification = z.infer<typeof taskVerificationSchema>;
