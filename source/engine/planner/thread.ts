import { withHumanMessage } from './answers.js';
import type { SubjectView } from './context-dump.js';
import type { GhIssue } from './github.js';
import { normalize } from './questions.js';
import type { Message, Session } from './schemas.js';

/**
 * An issue thread as the planner's discussion. gh posts as whoever is logged in (often the very
 * human the planner asks), so the planner's own comments are those of that account that carry a
 * hidden marker: the marker alone is not enough, since anyone can type it, and a comment passing
 * as the planner's would move "the planner's last comment" past a human's proceed and hide it.
 * Comments are imported once each (by GitHub id), in thread order.
 */

export const RELAY_MARKER = '<!-- relais-planner -->';

export function issueSubject(issue: number, thread: GhIssue): SubjectView {
  return {
    source: `GitHub issue #${issue}`,
    title: thread.title,
    body: thread.body,
    reporter: thread.author ? `@${thread.author}` : '(unknown)',
    assignee:
      thread.assignees.length > 0 ? thread.assignees.map((a) => `@${a}`).join(', ') : '(nobody assigned yet)',
  };
}

export function roleIn(thread: GhIssue, login: string): Message['role'] {
  if (login === thread.author) return 'reporter';
  return thread.assignees.includes(login) ? 'assignee' : 'other';
}

export function commentBody(message: Message): string {
  return `${message.text.trim()}\n\n${RELAY_MARKER}\n`;
}

/**
 * The session with the thread's new comments in it (and the planner's own linked to their id).
 * `plannerLogin`: the account gh posts as (`gh api user`).
 */
export function importThread(session: Session, thread: GhIssue, now: Date, plannerLogin: string): Session {
  let next: Session = {
    ...session,
    reporter: thread.author,
    assignee: thread.assignees[0] ?? null,
    subject:
      session.subject.kind === 'issue'
        ? { ...session.subject, title: thread.title.slice(0, 300) }
        : session.subject,
  };
  const known = new Set(next.discussion.flatMap((m) => (m.source_id ? [m.source_id] : [])));
  for (const comment of thread.comments) {
    if (known.has(comment.id)) continue;
    known.add(comment.id);
    if (comment.author === plannerLogin && comment.body.includes(RELAY_MARKER)) {
      next = linkRelayComment(next, comment.id, comment.body.replace(RELAY_MARKER, '').trim(), now);
      continue;
    }
    if (!comment.body.trim()) continue;
    next = withHumanMessage(
      next,
      {
        text: comment.body,
        author: comment.author,
        role: roleIn(thread, comment.author),
        sourceId: comment.id,
      },
      now,
    );
  }
  return next;
}

function linkRelayComment(session: Session, id: string, text: string, now: Date): Session {
  const mine = session.discussion.find(
    (m) => m.from === 'relay' && m.source_id === null && normalize(m.text) === normalize(text),
  );
  if (mine)
    return {
      ...session,
      discussion: session.discussion.map((m) => (m === mine ? { ...m, source_id: id } : m)),
    };
  // A planner comment this workspace has no record of (another checkout posted it): still the
  // planner's words, so it is never read as a human's answer.
  const message: Message = {
    id: session.discussion.reduce((max, m) => Math.max(max, m.id), 0) + 1,
    from: 'relay',
    author: 'relay',
    role: null,
    kind: 'comment',
    text: text.slice(0, 20_000),
    answers: [],
    source_id: id,
    at: now.toISOString(),
  };
  return { ...session, discussion: [...session.discussion, message].slice(-2000) };
}
