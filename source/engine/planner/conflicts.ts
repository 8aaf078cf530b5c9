import { lastRelayId } from './batch.js';
import { normalize } from './questions.js';
import type { Gap, Session } from './schemas.js';

/**
 * Seed 004 "Answer handling": "If answers conflict, surface the conflict concisely and ask for a
 * single decision." The runner can see a conflict when humans answer a gap by its id: an open gap
 * whose answers differ, taking each person's latest (one who changes their mind is no conflict).
 * It is new while one of those answers came after the planner's last comment: that is when the
 * planner's next answer must surface it.
 */

export interface Conflict {
  readonly gap: Gap;
  /** Each person's latest answer to the gap, in the order they wrote. */
  readonly answers: Array<{ author: string; messageId: number; text: string }>;
}

export function newConflicts(session: Session): Conflict[] {
  const after = lastRelayId(session);
  const conflicts: Conflict[] = [];
  for (const gap of session.gaps) {
    if (gap.status !== 'open') continue;
    const latest = new Map<string, { author: string; messageId: number; text: string }>();
    for (const m of session.discussion) {
      if (m.from !== 'human') continue;
      for (const a of m.answers)
        if (a.gap_id === gap.id) {
          latest.delete(m.author);
          latest.set(m.author, { author: m.author, messageId: m.id, text: a.text });
        }
    }
    const answers = [...latest.values()].sort((x, y) => x.messageId - y.messageId);
    const distinct = new Set(answers.map((a) => normalize(a.text)));
    if (distinct.size > 1 && answers.some((a) => a.messageId > after)) conflicts.push({ gap, answers });
  }
  return conflicts;
}

/** What a question surfacing the conflict must quote of an answer: its first line, at most 60 characters. */
export function answerExcerpt(text: string): string {
  const first = text.split(/\r?\n/).find((l) => l.trim()) ?? '';
  return first.trim().slice(0, 60);
}
