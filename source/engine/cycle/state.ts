import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import * as z from 'zod';
import { MODES } from '../protocol/cycle-policy.js';
import { type JsonRead, readJsonValidated, writeJsonAtomic } from '../workspace/atomic-write.js';
import type { CyclePaths } from './paths.js';
import { TRACK_TYPES } from './track-types.js';

/**
 * Seed 003 STATE.yaml as relais/cycle/STATE.json: the same field names (phase, mode, cycle.*,
 * loop.*, task.*, track.*, last_action, last_result, last_good.*, last_cycle.*, budget.*), zod
 * validated on every read and written atomically. A file that does not validate is never reset.
 */

export const PHASES = ['research', 'select-track', 'execute', 'complete', 'needs_human'] as const;
export type Phase = (typeof PHASES)[number];

export const SUB_STEPS = ['generate', 'implement', 'verify', 'reflect'] as const;
export type SubStep = (typeof SUB_STEPS)[number];

export const ACTIONS = [
  'seed_docs',
  'pick_track',
  'create_spec',
  'create_plan',
  'generate_task',
  'implement_task',
  'verify_task',
  'reflect',
  'retry_task',
  'replan_task',
  'rollback_and_escalate',
  'summarize',
  'escalate',
] as const;
export type CycleAction = (typeof ACTIONS)[number];

const iso = z.iso.datetime({ offset: true });
/** How many past nonces STATE.json keeps. */
export const RECENT_NONCES = 64;
const sha = z.string().regex(/^[0-9a-f]{40}$/);
export const bareId = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'an id is letters, digits, ".", "_" or "-"');

export const fileToLoadSchema = z.strictObject({
  path: z.string().min(1).max(300),
  why: z.string().max(300),
});

const trackSchema = z.strictObject({
  id: bareId.nullable().default(null),
  name: z.string().max(300).nullable().default(null),
  phase: z.string().max(100).nullable().default(null),
  requirements: z.array(z.string().max(100)).max(100).default([]),
  goal: z.string().max(2000).nullable().default(null),
  estimated_tasks: z.int().min(0).nullable().default(null),
  /** The planner's TRACK_TYPE: which rows of the loading map apply (older files: none). */
  type: z.enum(TRACK_TYPES).nullable().default(null),
  status: z.enum(['none', 'in-progress', 'complete']).default('none'),
  spec_path: z.string().max(300).nullable().default(null),
  plan_path: z.string().max(300).nullable().default(null),
  plan_base_commit: sha.nullable().default(null),
  /** The plan file's task count (plan.json is what generate_task and reflect read it from). */
  task_count: z.int().min(0).default(0),
  /** 1-based. */
  task_current: z.int().min(0).default(0),
  /**
   * Why the track's plan stopped (REPLAN_REQUIRED, REQUEST_SPLIT): set by `relais cycle --resume`,
   * which sends the track back to create_plan; told to the planner, cleared by the new plan.
   */
  replan_reason: z.string().max(4000).nullable().default(null),
});

const taskSchema = z.strictObject({
  id: bareId.nullable().default(null),
  description: z.string().max(2000).nullable().default(null),
  sub_step: z.enum(SUB_STEPS).nullable().default(null),
  retry_count: z.int().min(0).default(0),
  max_retries: z.int().min(1).default(3),
  replan_attempted: z.boolean().default(false),
  files_to_load: z.array(fileToLoadSchema).max(200).default([]),
  /** The task's FILES as bound by generate_task (adapted on drift): the scope verification judges. */
  files: z
    .array(
      z.strictObject({
        path: z.string().min(1).max(300),
        action: z.enum(['add', 'modify', 'delete']),
        rationale: z.string().max(2000),
      }),
    )
    .max(200)
    .nullable()
    .default(null),
  packet_path: z.string().max(300).nullable().default(null),
  /** HEAD before the current implementation attempt: what verification diffs against. */
  base_commit: sha.nullable().default(null),
  /**
   * A human's judgement of the task's LLM: criteria (`relais cycle --resume --verdict`), taken by
   * the next verification instead of the verifier when HEAD is still `commit`.
   */
  /**
   * What the human answered when the implementer asked instead of implementing (issue 15), each
   * with the question: handed to the task's next attempts, cleared with the task.
   */
  human_answers: z.array(z.string().max(4000)).max(10).default([]),
  human_verdict: z
    .strictObject({
      answer: z.enum(['YES', 'NO']),
      reason: z.string().max(500),
      commit: sha,
      at: iso,
    })
    .nullable()
    .default(null),
  /** Verifier failures and implementer errors, fed to the next attempt's prompt. */
  failure_context: z.array(z.string().max(2000)).max(50).default([]),
  /** The fingerprint of the packet being attempted (task-fingerprint.ts). */
  plan_fingerprint: z.string().max(64).nullable().default(null),
  /** Plans of this task a re-plan gave up on: a re-plan to one of them is refused (issue 15). */
  failed_plans: z.array(z.string().max(64)).max(50).default([]),
});

export const cycleStateSchema = z.strictObject({
  version: z.literal(1).default(1),
  run_id: bareId,
  phase: z.enum(PHASES),
  mode: z.enum(MODES),
  cycle: z
    .strictObject({
      id: z.string().max(200).nullable().default(null),
      nonce: z
        .string()
        .regex(/^[0-9A-F]{6}$/)
        .nullable()
        .default(null),
      status: z.enum(['idle', 'running', 'complete', 'failed', 'timed_out']).default('idle'),
      started_at: iso.nullable().default(null),
      finished_at: iso.nullable().default(null),
      /** The nonces of the last cycles, oldest first: a nonce is never used twice (seed 003 rule 7). */
      recent_nonces: z
        .array(z.string().regex(/^[0-9A-F]{6}$/))
        .max(RECENT_NONCES)
        .default([]),
    })
    .prefault({}),
  loop: z
    .strictObject({
      iteration: z.int().min(0).default(0),
      stuck_count: z.int().min(0).default(0),
      /** The commit and test count after the last full execute attempt (the no-progress rule). */
      progress_mark: z
        .strictObject({ commit_hash: sha, test_count: z.int().min(0).nullable() })
        .nullable()
        .default(null),
    })
    .prefault({}),
  task: taskSchema.prefault({}),
  track: trackSchema.prefault({}),
  tracks_completed: z
    .array(
      z.strictObject({
        id: bareId,
        name: z.string().max(300),
        phase: z.string().max(100).nullable(),
        completed_at: iso,
        tasks: z.int().min(0),
      }),
    )
    .default([]),
  roadmap: z
    .strictObject({
      current_phase: z.string().max(100).nullable().default(null),
      phases_completed: z.array(z.string().max(100)).default([]),
      /** Why the planner's last PHASE_COMPLETE was refused (context for the next pick_track). */
      unmet: z.string().max(2000).nullable().default(null),
      /** The planner's last pick that a human declined (context for the next pick_track). */
      declined: z.string().max(500).nullable().default(null),
    })
    .prefault({}),
  last_action: z.enum(ACTIONS).nullable().default(null),
  last_result: z
    .strictObject({
      ok: z.boolean(),
      details: z.string().max(4000),
      code: z.string().max(64).nullable().default(null),
    })
    .nullable()
    .default(null),
  last_good: z
    .strictObject({
      commit: sha.nullable().default(null),
      task_id: bareId.nullable().default(null),
      timestamp: iso.nullable().default(null),
    })
    .prefault({}),
  last_cycle: z
    .strictObject({
      commit_hash: sha.nullable().default(null),
      test_count: z.int().min(0).nullable().default(null),
      diff_lines: z.int().min(0).nullable().default(null),
    })
    .prefault({}),
  budget: z.strictObject({ started_at: iso, warned: z.boolean().default(false) }),
  /** Why the cycle waits for a human ("pause"), shown by `relais status`; null when it does not. */
  needs_human: z
    .strictObject({
      reason: z.string().max(4000),
      code: z.string().max(64),
      remediation: z.string().max(1000),
      /** The phase `relais cycle --resume` returns to. */
      resume_phase: z.enum(PHASES),
      at: iso,
    })
    .nullable()
    .default(null),
});

export type CycleState = z.infer<typeof cycleStateSchema>;

export function freshState(now: Date, mode: CycleState['mode']): CycleState {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, '');
  return cycleStateSchema.parse({
    run_id: `${stamp}-${randomBytes(2).toString('hex')}`,
    phase: 'research',
    mode,
    budget: { started_at: now.toISOString() },
  });
}

export { type CyclePaths, cyclePaths } from './paths.js';

export function readCycleState(paths: CyclePaths): Promise<JsonRead<CycleState>> {
  return readJsonValidated(paths.state, cycleStateSchema);
}

export async function writeCycleState(paths: CyclePaths, state: CycleState): Promise<void> {
  await mkdir(paths.dir, { recursive: true });
  await writeJsonAtomic(paths.state, cycleStateSchema, state);
}

/** `needs_human` with its reason: the seed's "pause" and every escalation. */
export function pause(
  state: CycleState,
  pauseInfo: { reason: string; code: string; remediation: string },
  now: Date,
): CycleState {
  return {
    ...state,
    phase: 'needs_human',
    needs_human: {
      ...pauseInfo,
      resume_phase:
        state.phase === 'needs_human' ? (state.needs_human?.resume_phase ?? 'research') : state.phase,
      at: now.toISOString(),
    },
  };
}

/** The task part of STATE before a task's packet is generated (a new task, or one started afresh). */
export function freshTask(state: CycleState): CycleState['task'] {
  return {
    ...state.task,
    id: null,
    description: null,
    sub_step: 'generate',
    retry_count: 0,
    replan_attempted: false,
    files_to_load: [],
    files: null,
    human_verdict: null,
    human_answers: [],
    packet_path: null,
    base_commit: null,
    failure_context: [],
    plan_fingerprint: null,
    failed_plans: [],
  };
}

/** Padded task number, as the seed's TASK_{NNN}. */
export function taskNumber(n: number): string {
  return String(n).padStart(3, '0');
}
