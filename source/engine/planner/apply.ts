import { readyAcknowledgment } from './acknowledgment.js';
import { nextMessageId } from './answers.js';
import { type Batch, explicitProceed, proceedCandidates } from './batch.js';
import type { Gap, Handoff, Learning, Message, Session } from './schemas.js';

/**
 * Executes a validated answer on the session (pure): new gaps get the next short ids, closed
 * gaps keep their reason and note, the planner's comments join the discussion (and the outbox,
 * when they must be posted to an issue), and readiness records the handoff for the spec-agent
 * (on an issue, with the runner's acknowledgment posted after the planner's comments).
 */

export interface Applied {
  readonly session: Session;
  readonly comments: Message[];
  readonly added: Gap[];
  readonly closed: Gap[];
  readonly learnings: Learning[];
  readonly handoff: Handoff | null;
  /** The notes of the gaps closed as inferred in this answer: what the humans must be told. */
  readonly assumptions: Array<{ gap: Gap; note: string }>;
  /** On an issue that became ready: the runner's own comment saying so (in the outbox). */
  readonly acknowledgment: Message | null;
}

export interface ApplyInput {
  readonly session: Session;
  readonly batch: Batch;
  /** The learnings this answer proposed, once stored (with their ids). */
  readonly learnings: Learning[];
  /** The highest message id the planner was shown in this run. */
  readonly seenMessageId: number;
  /** Comments go to the outbox (GitHub) instead of only the discussion (terminal). */
  readonly outbox: boolean;
  readonly now: Date;
}

export function applyBatch(input: ApplyInput): Applied {
  const { batch, now } = input;
  const at = now.toISOString();
  const before = input.session;
  const asked = batch.add.length > 0;
  const round = before.rounds + (asked ? 1 : 0);
  const added: Gap[] = batch.add.map((g, i) => ({
    id: before.next_gap_id + i,
    question: g.question,
    respondent: g.respondent,
    severity: g.severity,
    evidence: g.evidence?.trim() || null,
    why: g.why?.trim().split(/\r?\n/)[0]?.slice(0, 300) || null,
    status: 'open',
    closed_reason: null,
    closed_note: null,
    round,
    asked_at: at,
    closed_at: null,
  }));
  const closes = new Map(batch.close.map((c) => [c.gap_id, c]));
  const gaps = before.gaps.map((gap): Gap => {
    const close = closes.get(gap.id);
    if (!close) return gap;
    return {
      ...gap,
      status: 'closed',
      closed_reason: close.reason,
      closed_note: close.reason === 'not_relevant' ? null : (close.note?.trim() ?? null),
      closed_at: at,
    };
  });
  const closed = gaps.filter((g) => closes.has(g.id));
  let nextId = nextMessageId(before);
  const comments: Message[] = batch.comments.map((c) => ({
    id: nextId++,
    from: 'relay',
    author: 'relay',
    role: null,
    kind: c.kind,
    text: c.content,
    answers: [],
    source_id: null,
    at,
  }));
  const ready = batch.ready[0];
  const proceed = explicitProceed(before) ?? proceedCandidates(before).at(-1);
  const handoff: Handoff | null =
    ready && proceed
      ? {
          context_summary: ready.context_summary,
          relevant_finding_ids: ready.relevant_finding_ids,
          closed_gap_ids: [...new Set(ready.closed_gap_ids)],
          learning_ids: [...new Set([...ready.learning_ids, ...input.learnings.map((l) => l.id)])],
          proceed_message_id: proceed.id,
          at,
        }
      : null;
  const assumptions = closed
    .filter((g) => g.closed_reason === 'inferred')
    .map((gap) => ({ gap, note: gap.closed_note ?? '' }));
  const acknowledgment: Message | null =
    handoff && input.outbox
      ? {
          id: nextId++,
          from: 'relay',
          author: 'relay',
          role: null,
          kind: 'comment',
          text: readyAcknowledgment(assumptions),
          answers: [],
          source_id: null,
          at,
        }
      : null;
  const posted = acknowledgment ? [...comments, acknowledgment] : comments;
  const session: Session = {
    ...before,
    gaps: [...gaps, ...added],
    next_gap_id: before.next_gap_id + added.length,
    discussion: [...before.discussion, ...posted].slice(-2000),
    outbox: input.outbox
      ? [...before.outbox, ...posted.map((m) => ({ message_id: m.id, posted_at: null }))].slice(-2000)
      : before.outbox,
    rounds: round,
    planner_runs: before.planner_runs + 1,
    seen_message_id: Math.max(before.seen_message_id, input.seenMessageId),
    handoff: handoff ?? before.handoff,
    status: handoff ? 'ready' : before.status,
    updated_at: at,
  };
  return {
    session,
    comments,
    added,
    closed,
    learnings: input.learnings,
    handoff,
    assumptions,
    acknowledgment,
  };
}
