import { PHASE_ORDER, type WorkflowFile, workflowFileSchema } from '../protocol/workflow.js';
import { type JsonRead, readJsonValidated, writeJsonAtomic } from '../workspace/atomic-write.js';
import type { WorkspacePaths } from '../workspace/paths.js';

/** relais/WORKFLOW.json: validated on read, written atomically on every transition. */

export function readWorkflow(paths: WorkspacePaths): Promise<JsonRead<WorkflowFile>> {
  return readJsonValidated(paths.workflow, workflowFileSchema);
}

export function writeWorkflow(paths: WorkspacePaths, workflow: WorkflowFile): Promise<void> {
  return writeJsonAtomic(paths.workflow, workflowFileSchema, workflow);
}

export interface FreshWorkflow {
  readonly prdTitle: string;
  readonly now: Date;
  readonly maxAttempts: number;
  readonly engine: WorkflowFile['engine'];
  readonly maxCostUsd: number | null;
  readonly issue?: number | null;
}

export function freshWorkflow({
  prdTitle,
  now,
  maxAttempts,
  engine,
  maxCostUsd,
  issue = null,
}: FreshWorkflow): WorkflowFile {
  return {
    schema_version: 1,
    state: 'IDLE',
    phase: 'idle',
    status: 'running',
    started_at: now.toISOString(),
    updated_at: now.toISOString(),
    tasks_completed: 0,
    tasks_total: 0,
    current_task: null,
    circuit_breaker: { state: 'closed', attempts: 0, max_attempts: maxAttempts, last_trigger: null },
    lane_breakers: {},
    failure_reason: null,
    failure_detail: null,
    completed_phases: [],
    gate_decisions: [],
    prd_title: prdTitle,
    base_branch: null,
    feature_branch: null,
    pr_url: null,
    pr_outcome: null,
    pid: process.pid,
    cost_usd: 0,
    unreported_usd: 0,
    unreported_calls: 0,
    pending_answer: null,
    allowed_tools: [],
    engine,
    issue,
    base_commit: null,
    tasks: [],
    verification: null,
    blast_radius: null,
    waiting_until: null,
    max_cost_usd: maxCostUsd,
    phases: {},
    next_steps: [],
  };
}

/** Where a resume starts: after the last phase completed for good (seed 002 §8 order). */
export function resumePhase(workflow: WorkflowFile): (typeof PHASE_ORDER)[number] {
  // After the last completed one, not the first one missing: a workflow that skipped planning
  // records PLANNING as completed, and nothing behind the last completed phase runs again.
  const last = Math.max(-1, ...workflow.completed_phases.map((p) => PHASE_ORDER.indexOf(p)));
  return PHASE_ORDER[Math.min(last + 1, PHASE_ORDER.length - 1)] ?? 'PR';
}
