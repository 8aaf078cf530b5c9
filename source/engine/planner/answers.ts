import type { Message, Session } from './schemas.js';

/**
 * A human's reply at the terminal becomes one discussion message. Lines that start with a gap id
 * ("1: keep them", "#2 - yes", "gap 3) weekly") answer that gap, with the lines under them;
 * anything else is free text. The planner reads both, and judges what they mean.
 */

/** Typed as is (or sent by the app's Ctrl-P): an explicit proceed signal. */
export const PROCEED_WORD = 'proceed';

export function isProceedWord(text: string): boolean {
  return /^\s*proceed\s*[.!]?\s*$/i.test(text);
}

const ANSWER_LINE = /^\s*(?:gap\s*)?#?(\d{1,4})\s*(?:[:.)]|\s[-–—])\s*(.*)$/i;

export function answersByGap(text: string, gapIds: readonly number[]): Message['answers'] {
  const answers: Array<{ gap_id: number; lines: string[] }> = [];
  let current: { gap_id: number; lines: string[] } | null = null;
  for (const line of text.split(/\r?\n/)) {
    const match = ANSWER_LINE.exec(line);
    const id = match ? Number(match[1]) : Number.NaN;
    if (match && gapIds.includes(id)) {
      current = { gap_id: id, lines: [match[2] ?? ''] };
      answers.push(current);
    } else if (current) current.lines.push(line);
  }
  return answers
    .map((a) => ({ gap_id: a.gap_id, text: a.lines.join('\n').trim() }))
    .filter((a) => a.text.length > 0);
}

export interface HumanReply {
  readonly text: string;
  readonly author: string;
  readonly role: Message['role'];
  /** Set when the proceed came without words from a human (the proceed question, --yes). */
  readonly proceed?: boolean;
  readonly sourceId?: string | null;
}

/**
 * Appends the reply to the discussion (ids are the discussion's own, in order). On a GitHub issue
 * a "proceed" by someone who is neither the reporter nor an assignee (role `other`) is no explicit
 * proceed: it is kept as an ordinary answer, for the planner to read like any other.
 */
export function withHumanMessage(session: Session, reply: HumanReply, now: Date): Session {
  const proceed = reply.role !== 'other' && (reply.proceed === true || isProceedWord(reply.text));
  const message: Message = {
    id: nextMessageId(session),
    from: 'human',
    author: reply.author.slice(0, 100),
    role: reply.role,
    kind: proceed ? 'proceed' : 'answer',
    text: reply.text.slice(0, 20_000),
    answers: proceed
      ? []
      : answersByGap(
          reply.text,
          session.gaps.map((g) => g.id),
        ).slice(0, 100),
    source_id: reply.sourceId ?? null,
    at: now.toISOString(),
  };
  return {
    ...session,
    discussion: [...session.discussion, message].slice(-2000),
    updated_at: now.toISOString(),
  };
}

export function nextMessageId(session: Session): number {
  return session.discussion.reduce((max, m) => Math.max(max, m.id), 0) + 1;
}
