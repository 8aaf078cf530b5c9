import type { LearningProposal, Message, Session } from './schemas.js';

/**
 * The human message a proposed learning comes from (seed 004 v0: learnings from humans only).
 * Learnings reach every later orchestrator prompt through FACTS.md, so each must name the human
 * message it was taken from (the discussion in the context dump shows every message's id), at the
 * terminal as on GitHub: crediting an unnamed learning to whoever spoke last would pass the
 * planner's own inference off as a human's words. On a GitHub issue anyone may write, so that
 * message must also be the reporter's or an assignee's (a passer-by on a public issue does not get
 * to teach the orchestrator). A learning without a source is refused with the reason, never stored.
 */

export type LearningSource = { ok: true; message: Message } | { ok: false; why: string };

export function learningSource(session: Session, proposal: LearningProposal): LearningSource {
  const named = proposal.source_message_id;
  const onIssue = session.subject.kind === 'issue';
  if (named == null)
    return {
      ok: false,
      why: onIssue
        ? 'names no source_message_id: on a GitHub issue, name the message of the reporter or an assignee it comes from'
        : 'names no source_message_id: name the human message it comes from (its [message N] id in the discussion)',
    };
  const message = session.discussion.find((m) => m.from === 'human' && m.id === named);
  if (!message) return { ok: false, why: `names message ${named}, which is not a human message` };
  if (onIssue && message.role !== 'reporter' && message.role !== 'assignee')
    return {
      ok: false,
      why: `comes from message ${named} by @${message.author}, who is neither the reporter nor an assignee: on a GitHub issue, learnings are taken from their messages only`,
    };
  return { ok: true, message };
}
