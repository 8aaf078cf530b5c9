import type {
  GapAdd,
  GapClose,
  LearningProposal,
  Message,
  PlannerAnswer,
  PostComment,
  ReadyData,
  Session,
} from './schemas.js';

/** A planner answer gathered by kind, in the order the planner gave them. */
export interface Batch {
  readonly comments: PostComment[];
  readonly add: GapAdd[];
  readonly close: GapClose[];
  readonly learnings: LearningProposal[];
  readonly ready: ReadyData[];
}

export function batchOf(answer: PlannerAnswer): Batch {
  const batch: Batch = { comments: [], add: [], close: [], learnings: [], ready: [] };
  for (const action of answer.actions) {
    if (action.type === 'post_comment') batch.comments.push(action.data);
    else if (action.type === 'update_gaps') {
      batch.add.push(...action.data.add);
      batch.close.push(...action.data.close);
    } else if (action.type === 'update_learnings') batch.learnings.push(...action.data.propose);
    else batch.ready.push(action.data);
  }
  return batch;
}

/** The planner's last comment's id (0 before it ever spoke). */
export function lastRelayId(session: Session): number {
  return session.discussion.reduce((max, m) => (m.from === 'relay' ? Math.max(max, m.id) : max), 0);
}

/**
 * Human messages after the planner's last comment: a proceed signal can only be among them
 * (seed 004 Phase 4: the planner asks, then waits).
 */
export function humanAfterRelay(session: Session): Message[] {
  const after = lastRelayId(session);
  return session.discussion.filter((m) => m.from === 'human' && m.id > after);
}

/**
 * Whether a human message can move the planner on (a proceed signal, readiness). At the terminal
 * the one human there can; on a GitHub issue only the reporter and the assignees can: anyone may
 * write on a public issue and answer a question (seed 004: "any human can answer"), but a
 * passer-by's "proceed" must not end planning and close the open questions as assumptions.
 */
export function mayProceed(session: Session, message: Message): boolean {
  if (message.from !== 'human') return false;
  if (session.subject.kind !== 'issue') return true;
  return message.role === 'reporter' || message.role === 'assignee';
}

/** Human messages after the planner's last comment that may be its proceed signal. */
export function proceedCandidates(session: Session): Message[] {
  return humanAfterRelay(session).filter((m) => mayProceed(session, m));
}

/**
 * An explicit proceed (typed "proceed", the app's key, yes at the proceed question, --yes) by
 * someone who may give it (a session written before that check may hold one by anybody).
 */
export function explicitProceed(session: Session): Message | null {
  return proceedCandidates(session).findLast((m) => m.kind === 'proceed') ?? null;
}

/**
 * Whether the planner has something to answer: it never ran, or a human wrote since it last
 * looked. Otherwise the runner waits: seed 004 "silence → do nothing".
 */
export function plannerHasNews(session: Session): boolean {
  return (
    session.planner_runs === 0 ||
    session.discussion.some((m) => m.from === 'human' && m.id > session.seen_message_id)
  );
}
