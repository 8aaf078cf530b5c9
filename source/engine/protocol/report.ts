import * as z from 'zod';
import { ALL_CODES } from './codes.js';
import { lazySchema } from './lazy-schema.js';
import { ledgerSchema } from './state.js';
import { controlSchema, questionSchema } from './task.js';

/**
 * relais/REPORT.json, the single source of truth of a run (seed 000 §3.3). Additions to the seed:
 * `remediation` and `detail` (every STOP/BLOCKED tells what to do), `agents` (what each agent
 * claimed and cost), `rollback` and `commit` (what the runner did about it). Commits are null when
 * the run never reached git (a missing repository has no HEAD).
 */

const commitId = lazySchema(() => z.string().min(7).max(64));

export const verificationRunSchema = lazySchema(() =>
  z.strictObject({
    template_id: z.string().min(1).max(64),
    phase: z.enum(['fast', 'slow']),
    cmd: z.string().min(1).max(120),
    args: z.array(z.string().max(200)).max(40),
    exit_code: z.int().min(-1).max(255),
    duration_ms: z.int().min(0),
    timed_out: z.boolean(),
  }),
);

export const sandboxKindSchema = lazySchema(() => z.enum(['bwrap', 'off', 'unavailable']));
export type SandboxName = z.infer<typeof sandboxKindSchema>;

export const blastRadiusSchema = lazySchema(() =>
  z.strictObject({
    files_touched: z.int().min(0),
    lines_added: z.int().min(0),
    lines_deleted: z.int().min(0),
    new_files: z.int().min(0),
  }),
);

const agentCallSummary = lazySchema(() =>
  z.strictObject({
    calls: z.int().min(0),
    cost_usd: z.number().min(0),
    output_valid: z.boolean().nullable(),
    summary: z.string().max(800).nullable(),
    error: z.string().max(2000).nullable(),
  }),
);

export const reportSchema = lazySchema(() =>
  z.strictObject({
    run_id: z.string().min(8).max(80),
    started_at: z.iso.datetime(),
    ended_at: z.iso.datetime(),
    duration_ms: z.int().min(0),
    base_commit: commitId.nullable(),
    head_commit: commitId.nullable(),
    task: z
      .strictObject({
        task_id: z.string(),
        milestone_id: z.string(),
        task_kind: z.enum(['execute', 'verify_only', 'question']),
        intent: z.string(),
        question: questionSchema.optional(),
      })
      .nullable(),
    verdict: z.enum(['success', 'stop', 'blocked']),
    code: z.enum(ALL_CODES),
    remediation: z.string().min(1).max(600),
    detail: z.string().max(4000).nullable(),
    blast_radius: blastRadiusSchema,
    blast_radius_line: z.string().max(200),
    /**
     * Issue 14: the OS sandbox the tick's agents and verifications ran in ("off": the config opted
     * out; null: the tick stopped before one was chosen).
     */
    sandbox: sandboxKindSchema.nullable(),
    scope: z.strictObject({
      ok: z.boolean(),
      violations: z.array(z.string().min(1).max(200)).max(200),
      touched_paths: z.array(z.string().min(1).max(400)).max(500),
      touched_paths_truncated: z.boolean(),
    }),
    diff: z.strictObject({
      files_changed: z.int().min(0),
      lines_changed: z.int().min(0),
      diff_patch_path: z.string().min(1).max(300).nullable(),
    }),
    verification: z.strictObject({
      exec_mode: z.literal('argv_no_shell'),
      runs: z.array(verificationRunSchema).max(40),
      verify_log_path: z.string().min(1).max(300).nullable(),
    }),
    budgets: ledgerSchema.extend({
      milestone_id: z.string().nullable(),
      warnings: z.array(z.string().min(1).max(200)).max(20),
    }),
    agents: z.strictObject({
      orchestrator: agentCallSummary,
      builder: agentCallSummary,
    }),
    rollback: z.strictObject({
      performed: z.boolean(),
      clean: z.boolean().nullable(),
      notes: z.array(z.string().min(1).max(400)).max(50),
    }),
    commit: commitId.nullable(),
    /** Seed 001 PR6: the orchestrator's decision instead of a build (`stop` ends a loop as success). */
    control: controlSchema.nullable(),
    pointers: z.strictObject({
      report_md_path: z.string(),
      history_dir: z.string().nullable(),
    }),
  }),
);

export type Report = z.infer<typeof reportSchema>;
export type VerificationRun = z.infer<typeof verificationRunSchema>;
export type BlastRadius = z.infer<typeof blastRadiusSchema>;
