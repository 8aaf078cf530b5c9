import type { TestProject } from './project.js';
import { workflowProject } from './workflow.js';

/**
 * The Relay planner's answers (seed 004 actions) as a test writes them, and a workflow project
 * with planning on. The fake agent replays them as its JSON result, one per planner call.
 */

export interface Question {
  readonly q: string;
  readonly why?: string;
  readonly severity?: 'blocking' | 'high' | 'medium' | 'low';
}

export function plannerProject(
  configure?: (config: any) => void,
): TestProject & { ghLog: string; remote: string } {
  return workflowProject((config) => {
    config.planner = { ...config.planner, enabled: true };
    configure?.(config);
  });
}

/** One comment asking `respondent` these questions (numbered), and one gap per question. */
export function ask(
  respondent: 'reporter' | 'assignee',
  questions: Question[],
  preface = 'A few quick questions:',
) {
  return [
    comment(
      [preface, ...questions.map((q, i) => `${i + 1}) ${q.q}${q.why ? `\n   ${q.why}` : ''}`)].join('\n'),
      'questions',
    ),
    {
      type: 'update_gaps',
      data: {
        add: questions.map((q) => ({
          question: q.q,
          respondent,
          severity: q.severity ?? 'high',
          why: q.why ?? null,
        })),
      },
    },
  ];
}

export function comment(content: string, kind = 'comment') {
  return { type: 'post_comment', data: { kind, content } };
}

export function proceedGate(
  content = 'I think we have enough to start drafting the spec. Want me to proceed?',
) {
  return comment(content, 'proceed_gate');
}

export function close(gap_id: number, reason: 'answered' | 'inferred' | 'not_relevant', note?: string) {
  return { type: 'update_gaps', data: { close: [{ gap_id, reason, ...(note ? { note } : {}) }] } };
}

export function learn(
  type: 'domain_learnings' | 'code_learnings',
  content: string,
  source_message_id?: number,
) {
  return { type: 'update_learnings', data: { propose: [{ type, content, source_message_id }] } };
}

export function ready(summary: string, closed_gap_ids: number[], learning_ids: number[] = []) {
  return {
    type: 'ready_for_spec_generation',
    data: { context_summary: summary, relevant_finding_ids: [], closed_gap_ids, learning_ids },
  };
}

/** A fake-claude step answering these actions. */
export function answer(...actions: unknown[]): Record<string, unknown> {
  return { result_json: { actions: actions.flat() } };
}
