import type { CyclePolicy } from '../protocol/cycle-policy.js';
import type { CycleAction, CycleState } from './state.js';

/**
 * Seed 003 Step 3 DECIDE: the 14 rows, top to bottom, first match wins; one pure function of the
 * state, the policy and what VALIDATE found. A state no row matches escalates ("escalate when
 * uncertain", Safety Constraint 10) with row null.
 */

export interface DecideInput {
  readonly state: CycleState;
  readonly policy: CyclePolicy;
  readonly budgetExceeded: boolean;
  /** Contradictions found by `stateProblems`; any makes the state invalid (row 1). */
  readonly problems: readonly string[];
}

export interface Decision {
  readonly action: CycleAction;
  /** 1-14, or null when no row matched. */
  readonly row: number | null;
  readonly reason: string;
}

export function decide({ state, policy, budgetExceeded, problems }: DecideInput): Decision {
  const { phase, task, track, loop, last_result: last } = state;
  const stuck = loop.stuck_count >= policy.escalation.stuck_threshold;
  const failed = task.sub_step === 'implement' && last?.ok === false;
  const hasTrack = track.id !== null && track.status === 'in-progress';
  const rows: Array<[boolean, CycleAction, string]> = [
    [
      budgetExceeded || problems.length > 0,
      'escalate',
      budgetExceeded ? 'time budget exceeded' : `state invalid: ${problems.join('; ')}`,
    ],
    [phase === 'execute' && stuck && task.replan_attempted, 'escalate', 'stuck again after a re-plan'],
    [
      phase === 'execute' && stuck && !task.replan_attempted,
      'replan_task',
      'stuck: re-plan before escalating',
    ],
    [
      phase === 'execute' && failed && task.retry_count >= task.max_retries,
      'rollback_and_escalate',
      `failed ${task.retry_count} times (max ${task.max_retries})`,
    ],
    [
      phase === 'execute' && failed && task.retry_count < task.max_retries,
      'retry_task',
      `failed, retry ${task.retry_count} of ${task.max_retries}`,
    ],
    [phase === 'research', 'seed_docs', 'research phase'],
    [phase === 'select-track' && !hasTrack, 'pick_track', 'no track selected'],
    [phase === 'select-track' && hasTrack && track.spec_path === null, 'create_spec', 'track has no spec'],
    [
      phase === 'select-track' && hasTrack && track.spec_path !== null && track.plan_path === null,
      'create_plan',
      'spec has no plan',
    ],
    [
      phase === 'execute' && (task.sub_step === null || task.sub_step === 'generate'),
      'generate_task',
      'next task packet',
    ],
    [phase === 'execute' && task.sub_step === 'implement', 'implement_task', 'implement the task'],
    [phase === 'execute' && task.sub_step === 'verify', 'verify_task', 'verify the implementation'],
    [phase === 'execute' && task.sub_step === 'reflect', 'reflect', 'task verified'],
    [phase === 'complete', 'summarize', 'project complete'],
  ];
  const index = rows.findIndex(([matches]) => matches);
  const match = rows[index];
  if (!match) return { action: 'escalate', row: null, reason: `no decide row matches phase ${phase}` };
  return { action: match[1], row: index + 1, reason: match[2] };
}

/** Contradictions a schema cannot see; any of them is "state invalid" for row 1. */
export function stateProblems(state: CycleState): string[] {
  const problems: string[] = [];
  const { track, task } = state;
  if (state.phase === 'execute') {
    if (track.id === null) problems.push('phase execute without track.id');
    if (track.plan_path === null) problems.push('phase execute without track.plan_path');
    if (track.task_current < 1 || track.task_current > track.task_count)
      problems.push(`track.task_current ${track.task_current} is outside 1..${track.task_count}`);
    if (task.sub_step !== null && task.sub_step !== 'generate' && task.id === null)
      problems.push(`task.sub_step ${task.sub_step} without task.id`);
    if ((task.sub_step === 'verify' || task.sub_step === 'reflect') && task.base_commit === null)
      problems.push(`task.sub_step ${task.sub_step} without task.base_commit`);
  }
  return problems;
}
