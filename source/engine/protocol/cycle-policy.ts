import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/**
 * Seed 003 POLICY.yaml as the `cycle` section of relais.config.json, and the per-role agents of
 * the cycle (`agents.planner|implementer|verifier`). Defaults are the seed's: stuck_threshold 3,
 * max_retries 3, the yolo / hybrid / interactive notification table, Codex plans and implements,
 * Claude verifies. The seed names max_hours without a number; 24 is ours.
 */

export const NOTIFY_EVENTS = [
  'track_complete',
  'new_track',
  'task_complete',
  'stuck',
  'rollback',
  'budget_warn',
  'complete',
] as const;
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];

export const NOTIFY_ACTIONS = ['silent', 'notify', 'ask', 'pause', 'warn', 'summary'] as const;
export type NotifyAction = (typeof NOTIFY_ACTIONS)[number];

const notifyAction = lazySchema(() => z.enum(NOTIFY_ACTIONS));

function modeTable(row: Record<NotifyEvent, NotifyAction>) {
  return z
    .strictObject({
      track_complete: notifyAction.default(row.track_complete),
      new_track: notifyAction.default(row.new_track),
      task_complete: notifyAction.default(row.task_complete),
      stuck: notifyAction.default(row.stuck),
      rollback: notifyAction.default(row.rollback),
      budget_warn: notifyAction.default(row.budget_warn),
      complete: notifyAction.default(row.complete),
    })
    .prefault({});
}

// Seed 003 "Notifications (Mode-Dependent)", column by column.
const ALWAYS = { stuck: 'pause', rollback: 'pause', budget_warn: 'warn', complete: 'summary' } as const;

export const MODES = ['yolo', 'hybrid', 'interactive'] as const;
export type CycleMode = (typeof MODES)[number];

const templateIds = z.array(z.string().regex(/^[A-Za-z0-9_.-]+$/)).max(16);

const cyclePolicyShape = lazySchema(() =>
  z.strictObject({
    mode: z.enum(MODES).default('hybrid'),
    modes: z
      .strictObject({
        yolo: modeTable({
          track_complete: 'silent',
          new_track: 'silent',
          task_complete: 'silent',
          ...ALWAYS,
        }),
        hybrid: modeTable({ track_complete: 'notify', new_track: 'ask', task_complete: 'silent', ...ALWAYS }),
        interactive: modeTable({
          track_complete: 'notify',
          new_track: 'ask',
          task_complete: 'ask',
          ...ALWAYS,
        }),
      })
      .prefault({}),
    escalation: z
      .strictObject({
        stuck_threshold: z.int().min(1).max(100).default(3),
        max_retries: z.int().min(1).max(20).default(3),
        max_hours: z
          .number()
          .positive()
          .max(24 * 365)
          .default(24),
        budget_warn_fraction: z.number().gt(0).lt(1).default(0.75),
      })
      .prefault({}),
    /** Where the seed docs and track documents live (seed: `.deadf/seed`, `.deadf/tracks`). */
    docs_dir: z
      .string()
      .regex(/^(?![\\/])(?!.*\.\.)[A-Za-z0-9_./-]+$/, 'docs_dir is a relative folder without ".."')
      .default('specs'),
    /** Cap of task.files_to_load, in estimated tokens (4 characters each). */
    files_to_load_tokens: z.int().min(100).max(100_000).default(3000),
    verify: z
      .strictObject({
        /**
         * Verification template ids (relais.config.json `verification.templates`) for check 1 and 2.
         * Empty tests: every parameter-free template not listed in `lint` runs as the tests; with
         * none at all, a task with a DET: criterion pauses (a DET: criterion never passes untested).
         */
        tests: templateIds.default([]),
        lint: templateIds.default([]),
        /** Check 3: the diff may be at most this many times ESTIMATED_DIFF. */
        diff_factor: z.number().min(1).max(100).default(3),
        /** Check 4: paths no change may touch. */
        blocked_globs: z
          .array(z.string().min(1).max(200))
          .max(64)
          .default(['**/.env*', '**/*.pem', '**/*.key', '**/.ssh/**', '.git/**', '**/.git/**']),
        /** Reads the test count for the no-progress rule from the test output: the last match wins. */
        test_count_regex: z.string().max(200).default('(\\d+) passed'),
        max_parallel_verifiers: z.int().min(1).max(16).default(7),
      })
      .prefault({}),
    timeouts: z
      .strictObject({
        planner_seconds: z.int().min(1).max(86400).default(600),
        implementer_seconds: z.int().min(1).max(86400).default(1800),
        verifier_seconds: z.int().min(1).max(86400).default(600),
      })
      .prefault({}),
    /** `relais cycle --loop` stops after this many cycles, or this many CYCLE_FAIL in a row. */
    max_cycles_per_loop: z.int().min(1).max(10_000).default(200),
    max_consecutive_failures: z.int().min(1).max(100).default(3),
  }),
);

export const cyclePolicySchema = cyclePolicyShape.prefault({});

export type CyclePolicy = z.infer<typeof cyclePolicySchema>;

export const PROVIDERS = ['claude', 'codex'] as const;
export type Provider = (typeof PROVIDERS)[number];

export const cycleAgentSchema = lazySchema(() =>
  z.strictObject({
    provider: z.enum(PROVIDERS),
    model: z.string().min(1).max(120),
  }),
);
export type CycleAgent = z.infer<typeof cycleAgentSchema>;

/** Seed 003 "Model Dispatch Reference": GPT plans, GPT-Codex implements, Claude verifies. */
export const cycleAgentsSchema = z
  .strictObject({
    planner: cycleAgentSchema.prefault({ provider: 'codex', model: 'gpt-5.2' }),
    implementer: cycleAgentSchema.prefault({ provider: 'codex', model: 'gpt-5.2-codex' }),
    verifier: cycleAgentSchema.prefault({ provider: 'claude', model: 'opus' }),
  })
  .prefault({});
export type CycleAgents = z.infer<typeof cycleAgentsSchema>;
export type CycleRole = keyof CycleAgents;

/** The codex CLI, as `claude_code_cli` is for Claude Code. */
export const codexCliSchema = z
  .strictObject({
    command: z
      .string()
      .min(1)
      .max(500)
      .regex(/^[^\s;&|`$<>]+$/, 'command is one program name or path, never a shell string')
      .default('codex'),
    /** Extra `-c key=value` overrides (a model provider, say); each is one argv word. */
    config_overrides: z.array(z.string().min(1).max(2000)).max(32).default([]),
    extra_env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).default({}),
  })
  .prefault({});
export type CodexCli = z.infer<typeof codexCliSchema>;

export function defaultPolicy(): CyclePolicy {
  return cyclePolicySchema.parse(undefined);
}

export function defaultAgents(): CycleAgents {
  return cycleAgentsSchema.parse(undefined);
}

/**
 * The `cycle` section of relais.config.json: the policy, and the cycle's three roles under
 * `cycle.agents` (not the top-level `agents`, where `planner` is the Relay planner of seed 004).
 */
export const cycleSectionSchema = cyclePolicyShape.extend({ agents: cycleAgentsSchema }).prefault({});
export type CycleSection = z.infer<typeof cycleSectionSchema>;

/** The policy and the roles of a parsed `cycle` section, apart. */
export function splitCycleSection(section: CycleSection): { policy: CyclePolicy; agents: CycleAgents } {
  const { agents, ...policy } = section;
  return { policy, agents };
}
