import type { Learning, Session } from './schemas.js';

/**
 * What the spec-agent receives from planning (seed 004 `ready_for_spec_generation`): the
 * planner's summary, each decision with its question (answers verbatim, assumptions as stated),
 * and the learnings it named. Rendered as plain text for the spec prompt's {{PLANNING}}.
 */

export function handoffText(session: Session, learnings: readonly Learning[]): string {
  const handoff = session.handoff;
  if (!handoff) return '';
  const decisions = handoff.closed_gap_ids.flatMap((id) => {
    const gap = session.gaps.find((g) => g.id === id);
    if (gap?.status !== 'closed') return [];
    const note = (gap.closed_note ?? '').replace(/\n/g, ' ');
    const said = gap.closed_reason === 'answered' ? `answered: "${note}"` : `assumed (not answered): ${note}`;
    return [`- [gap ${gap.id}] ${gap.question}\n  ${said}`];
  });
  const named = handoff.learning_ids.flatMap((id) => {
    const l = learnings.find((x) => x.id === id);
    return l ? [`- (${l.type === 'domain_learnings' ? 'domain' : 'code'}) ${l.content}`] : [];
  });
  return [
    "=== PLANNING (agreed with the human before this spec; the Relay planner's handoff) ===",
    `Summary: ${handoff.context_summary}`,
    ...(decisions.length > 0 ? ['Decisions:', ...decisions] : []),
    ...(named.length > 0 ? ['Learnings:', ...named] : []),
    'Treat the answers as requirements, and the assumptions as defaults the human accepted by proceeding.',
  ].join('\n');
}
