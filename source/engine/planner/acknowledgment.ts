import type { Gap } from './schemas.js';

/**
 * The runner's short comment on an issue once planning is done, so the humans see their proceed
 * was received even when the planner said nothing more (seed 004 "Spec Generator Behavior": "Got
 * it — drafting …"; "Assumption Handling": list key assumptions). It names the assumptions the
 * planner closed gaps with, one line each; it is posted like the planner's comments, through the
 * outbox and its secret scan.
 */

const MAX_ASSUMPTION_CHARS = 200;

export function readyAcknowledgment(assumptions: ReadonlyArray<{ gap: Gap; note: string }>): string {
  if (assumptions.length === 0) return 'Got it — proceeding to the spec.';
  return [
    'Got it — proceeding to the spec with these assumptions:',
    ...assumptions.map((a, i) => `${i + 1}. ${assumptionOf(a.note)} (gap ${a.gap.id})`),
  ].join('\n');
}

/** "Assumption: X\nRationale: Y" → "X": the assumption, on one line, without its rationale. */
export function assumptionOf(note: string): string {
  const flat = note.replace(/\s+/g, ' ').trim();
  const assumption = flat
    .replace(/\brationale\s*:.*$/i, '')
    .replace(/^\s*assumption\s*:\s*/i, '')
    .trim();
  const text = assumption || flat;
  return text.length > MAX_ASSUMPTION_CHARS ? `${text.slice(0, MAX_ASSUMPTION_CHARS - 1)}…` : text;
}
