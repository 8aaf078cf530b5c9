/**
 * Seed 003 verify_task Stage 3, "Combined verdict logic", every row. Deterministic wins: a failed
 * stage 1 is FAIL without asking a model; one NO is FAIL (conservative); a verifier that could not
 * be parsed after its retry is NEEDS_HUMAN; a verifier that asked for a human pauses.
 */

export type Stage1 = { kind: 'invalid'; reason: string } | { kind: 'ok'; pass: boolean };

export type CriterionVerdict =
  | { id: string; kind: 'answer'; answer: 'YES' | 'NO' | 'NEEDS_HUMAN'; reason: string }
  | { id: string; kind: 'unparsable'; error: string };

export type Combined = 'PASS' | 'FAIL' | 'PAUSE' | 'NEEDS_HUMAN' | 'CYCLE_FAIL';

export function combineVerdict(stage1: Stage1, criteria: readonly CriterionVerdict[] | null): Combined {
  if (stage1.kind === 'invalid') return 'CYCLE_FAIL'; // JSON invalid | (n/a)
  if (!stage1.pass) return 'FAIL'; // FAIL | (not run)
  const list = criteria ?? [];
  if (list.some((c) => c.kind === 'answer' && c.answer === 'NO')) return 'FAIL'; // PASS | FAIL
  if (list.some((c) => c.kind === 'unparsable')) return 'NEEDS_HUMAN'; // PASS | parse failure after retry
  if (list.some((c) => c.kind === 'answer' && c.answer === 'NEEDS_HUMAN')) return 'PAUSE'; // PASS | NEEDS_HUMAN
  return 'PASS'; // PASS | PASS (or no LLM: criteria at all)
}
