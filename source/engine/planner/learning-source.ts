import { humanAfterRelay } from './batch.js';
import type { LearningProposal, Message, Session } from './schemas.js';

/**
 * The human message a proposed learning comes from (seed 004 v0: learnings from humans only).
 * Learnings reach every later orchestrator prompt through FACTS.md. At the terminal there is one
 * human, and a learning naming no message comes from the latest one. On a GitHub issue anyone may
 * write: a learning must name its message, and that message must be the reporter's or an
 * assignee's (a passer-by on a public issue does not get to teach the orchestrator).
 */

export type LearningSource = { ok: true; message: Message } | { ok: false; why: string };

export function learningSource(session: Session, proposal: LearningProposal): LearningSource {
  const humans = session.discussion.filter((m) => m.from === 'human');
  const named = proposal.source_message_id;
  const onIssue = session.subject.kind === 'issue';
  if (named == null) {
    if (onIssue)
      return {
        ok: false,
        why: 'names no source_message_id: on a GitHub issue, name the message of the reporter or an assignee it comes from',
      };
    const latest = humanAfterRelay(session).at(-1) ?? humans.at(-1);
    return latest ? { ok: true, message: latest } : { ok: false, why: 'has no human message to come from' };
  }
  const message = humans.find((m) => m.id === named);
  if (!message) return { ok: false, why: `names message ${named}, which is not a human message` };
  if (onIssue && message.role !== 'reporter' && message.role !== 'assignee')
    return {
      ok: false,
      why: `comes from message ${named} by @${message.author}, who is neither the reporter nor an assignee: on a GitHub issue, learnings are taken from their messages only`,
    };
  return { ok: true, message };
}
