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

/** An explicit proceed (typed "proceed", the app's key, yes at the proceed question, --yes). */
export function explicitProceed(session: Session): Message | null {
  return humanAfterRelay(session).findLast((m) => m.kind === 'proceed') ?? null;
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
