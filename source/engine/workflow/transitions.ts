import type { WorkflowStateName } from '../protocol/workflow.js';

/**
 * Seed 002 §8 as data (with seed 004's PLANNING first): exactly these transitions exist. Abort, circuit breaker
 * and timeouts lead every running phase to FAILED (the diagram draws abort on IMPLEMENTATION;
 * `ralphy abort` is honoured in any running phase, and FAILED is where §8 sends every failure).
 */

export type WorkflowEvent =
  | 'start'
  | 'skip_planning'
  | 'ready'
  | 'spec_done'
  | 'approve'
  | 'reject'
  | 'exit_signal'
  | 'fail'
  | 'abort';

const TABLE: Partial<Record<WorkflowStateName, Partial<Record<WorkflowEvent, WorkflowStateName>>>> = {
  // Seed 004 before seed 002's SPECIFICATION: planning, unless planner.enabled is false.
  IDLE: { start: 'PLANNING', skip_planning: 'SPECIFICATION' },
  PLANNING: { ready: 'SPECIFICATION', fail: 'FAILED', abort: 'FAILED' },
  SPECIFICATION: { spec_done: 'AWAITING_SPEC_VALIDATION', fail: 'FAILED', abort: 'FAILED' },
  AWAITING_SPEC_VALIDATION: { approve: 'IMPLEMENTATION', reject: 'REJECTED', abort: 'FAILED' },
  IMPLEMENTATION: { exit_signal: 'QA', fail: 'FAILED', abort: 'FAILED' },
  QA: { exit_signal: 'AWAITING_QA_VALIDATION', fail: 'FAILED', abort: 'FAILED' },
  AWAITING_QA_VALIDATION: { approve: 'PR', reject: 'FAILED', abort: 'FAILED' },
  PR: { exit_signal: 'COMPLETED', fail: 'FAILED', abort: 'FAILED' },
};

export function nextState(state: WorkflowStateName, event: WorkflowEvent): WorkflowStateName {
  const next = TABLE[state]?.[event];
  if (!next) throw new Error(`no transition from ${state} on ${event} (seed 002 §8)`);
  return next;
}

export const TERMINAL: readonly WorkflowStateName[] = ['COMPLETED', 'FAILED', 'REJECTED'];

/** Every edge of the table, for tests and documentation. */
export function allTransitions(): Array<[WorkflowStateName, WorkflowEvent, WorkflowStateName]> {
  return Object.entries(TABLE).flatMap(([from, events]) =>
    Object.entries(events ?? {}).map(([event, to]): [WorkflowStateName, WorkflowEvent, WorkflowStateName] => [
      from as WorkflowStateName,
      event as WorkflowEvent,
      to as WorkflowStateName,
    ]),
  );
}
