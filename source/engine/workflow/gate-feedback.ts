import type { GateDecision, WorkflowFile } from '../protocol/workflow.js';

/**
 * A human's reason for rejecting a gate goes back to the agent whose work was rejected, on its
 * next attempt (issue 16 item 5): the spec agent after a rejected specification (a new workflow,
 * which carries the reason over), the QA agent after a rejected QA report (the resume runs QA
 * again). Read from the recorded gate decisions, so a crash in between loses nothing.
 */

const GATE_OF_PHASE: Partial<Record<string, 'spec' | 'qa'>> = { SPECIFICATION: 'spec', QA: 'qa' };

const WHAT: Record<'spec' | 'qa', string> = {
  spec: 'the specification and tasks you wrote',
  qa: 'your QA report',
};

/** The last decision at `gate`, when it is a human's reject with a reason. */
export function lastRejection(workflow: WorkflowFile, gate: 'spec' | 'qa'): GateDecision | null {
  const last = workflow.gate_decisions.findLast((d) => d.gate === gate);
  return last && last.decision === 'reject' && last.by === 'human' && last.reason ? last : null;
}

/** The note for the agent of `phase`, or null when its work was not rejected with a reason. */
export function rejectionNote(workflow: WorkflowFile, phase: string): string | null {
  const gate = GATE_OF_PHASE[phase];
  if (!gate) return null;
  const rejected = lastRejection(workflow, gate);
  if (!rejected?.reason) return null;
  return `The human rejected ${WHAT[gate]} at the ${gate} gate, and said why:\n${rejected.reason}\nAddress this in this attempt.`;
}
