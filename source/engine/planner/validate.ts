import { type Batch, explicitProceed, humanAfterRelay, proceedCandidates } from './batch.js';
import { answerExcerpt, newConflicts } from './conflicts.js';
import { learningSource } from './learning-source.js';
import { containsText, explicitQuestions, normalize, numberedItems } from './questions.js';
import type { Gap, GapClose, Learning, Session } from './schemas.js';

/**
 * The seed 004 rules, checked on the whole answer before any of it is executed ("Actions (v2
 * Contract)", "Gap Lifecycle (v2)", "Closing rules", "Assumption Handling", "Learnings (v2)").
 * Each broken rule is one line the repair prompt quotes and the human reads.
 */

export interface ValidationContext {
  readonly session: Session;
  readonly learnings: readonly Learning[];
  readonly findingIds: readonly string[];
  /** planner.max_rounds: question rounds before only the proceed gate is left. */
  readonly maxRounds: number;
  /** planner.max_questions_per_round. */
  readonly maxQuestions: number;
}

export type Validation = { ok: true } | { ok: false; problems: string[] };

const MAX_COMMENTS = 4;
const MAX_PROCEED_GATE_CHARS = 600;

export function validateBatch(batch: Batch, ctx: ValidationContext): Validation {
  const problems = [
    ...commentRules(batch),
    ...questionRules(batch, ctx),
    ...closeRules(batch.close, ctx.session),
    ...assumptionRules(batch),
    ...conflictRules(batch, ctx.session),
    ...learningRules(batch, ctx.session),
    ...readyRules(batch, ctx),
  ];
  return problems.length === 0 ? { ok: true } : { ok: false, problems };
}

function commentRules(batch: Batch): string[] {
  const problems: string[] = [];
  if (batch.comments.length > MAX_COMMENTS)
    problems.push(`${batch.comments.length} comments in one answer; at most ${MAX_COMMENTS}`);
  const gates = batch.comments.filter((c) => c.kind === 'proceed_gate');
  if (gates.length > 1) problems.push('more than one proceed_gate comment: ask to proceed once');
  for (const gate of gates) {
    // Seed 004 Phase 4: "a short, separate comment", "Do NOT bundle this with the question batches".
    if (gate.content.length > MAX_PROCEED_GATE_CHARS)
      problems.push(
        `the proceed_gate comment is ${gate.content.length} characters; keep it one short message`,
      );
    if (explicitQuestions(gate.content).length > 1 || numberedItems(gate.content).length > 0)
      problems.push(
        'the proceed_gate comment asks more than whether to proceed: questions go in their own comment, with gaps',
      );
  }
  if (gates.length > 0 && batch.add.length > 0)
    problems.push(
      'a proceed_gate comment together with new questions: ask to proceed only once you need no answers',
    );
  return problems;
}

/** Seed 004: "Every explicit question Planner asks becomes a stored gap", batched by respondent. */
function questionRules(batch: Batch, ctx: ValidationContext): string[] {
  const problems: string[] = [];
  const asking = batch.comments.filter((c) => c.kind !== 'proceed_gate');
  const lines = asking.flatMap((comment, index) =>
    explicitQuestions(comment.content).map((text) => ({ text, comment: index })),
  );
  if (lines.length !== batch.add.length)
    problems.push(
      `the comments ask ${lines.length} explicit question(s) but update_gaps.add has ${batch.add.length} new gap(s): every question (a line ending with "?") needs exactly one gap${lines.length > 0 ? ` (asked: ${lines.map((l) => `"${cut(l.text)}"`).join(', ')})` : ''}`,
    );
  const matches = (question: string, line: string) =>
    containsText(line, question) || containsText(question, line);
  for (const line of lines) {
    const gaps = batch.add.filter((g) => matches(g.question, line.text));
    if (gaps.length > 1)
      problems.push(`"${cut(line.text)}" matches ${gaps.length} new gaps: one gap per question`);
  }
  for (const gap of batch.add) {
    const where = lines.filter((l) => matches(gap.question, l.text));
    if (where.length === 0)
      problems.push(
        `new gap "${cut(gap.question)}" is not asked in any comment: post the question, word for word`,
      );
  }
  for (const [index, comment] of asking.entries()) {
    const respondents = new Set(
      batch.add
        .filter((g) => lines.some((l) => l.comment === index && matches(g.question, l.text)))
        .map((g) => g.respondent),
    );
    if (respondents.size > 1)
      problems.push(
        `one comment asks both the reporter and the assignee ("${cut(comment.content)}"): post one comment per respondent`,
      );
  }
  if (batch.add.length > ctx.maxQuestions)
    problems.push(
      `${batch.add.length} new questions; at most ${ctx.maxQuestions} at once (planner.max_questions_per_round)`,
    );
  if (batch.add.length > 0 && ctx.session.rounds >= ctx.maxRounds)
    problems.push(
      `no new questions: the ${ctx.maxRounds} question round(s) of planner.max_rounds are used; ask to proceed (a proceed_gate comment) instead`,
    );
  const open = ctx.session.gaps.filter((g) => g.status === 'open');
  for (const gap of batch.add) {
    const same = open.find((g) => normalize(g.question) === normalize(gap.question));
    if (same) problems.push(`gap ${same.id} already asks "${cut(gap.question)}"`);
  }
  return problems;
}

/** Seed 004 "update_gaps.close" rules: answered ⇒ verbatim note; inferred ⇒ assumption + rationale. */
function closeRules(closes: readonly GapClose[], session: Session): string[] {
  const problems: string[] = [];
  const seen = new Set<number>();
  const humanText = session.discussion.filter((m) => m.from === 'human').map((m) => m.text);
  for (const close of closes) {
    const gap = session.gaps.find((g) => g.id === close.gap_id);
    const note = close.note?.trim() ?? '';
    if (!gap) {
      problems.push(`gap ${close.gap_id} does not exist (gaps: ${ids(session.gaps) || 'none'})`);
      continue;
    }
    if (seen.has(gap.id)) problems.push(`gap ${gap.id} is closed twice`);
    seen.add(gap.id);
    if (gap.status === 'closed') problems.push(`gap ${gap.id} is already closed (${gap.closed_reason})`);
    if (close.reason === 'answered') {
      if (!note) problems.push(`gap ${gap.id} closed as answered needs a note: the human's answer, verbatim`);
      else if (!humanText.some((text) => containsText(text, note)))
        problems.push(
          `the note of gap ${gap.id} ("${cut(note)}") is not a verbatim excerpt of a human message: copy the answer as written`,
        );
    }
    if (close.reason === 'inferred' && !isAssumption(note))
      problems.push(
        `gap ${gap.id} closed as inferred needs a note of two lines: "Assumption: …" and "Rationale: …"`,
      );
    if (close.reason === 'not_relevant' && note)
      problems.push(`gap ${gap.id} closed as not_relevant takes no note`);
  }
  return problems;
}

/**
 * Seed 004 "Assumption Handling": "Clearly tell humans what assumptions were made". A gap closed
 * as inferred is the planner's guess at a human's answer, so the same answer must tell them, in a
 * comment of kind `assumptions` (a "Thanks!" or a proceed question tells them nothing).
 */
function assumptionRules(batch: Batch): string[] {
  const inferred = batch.close.filter((c) => c.reason === 'inferred').map((c) => c.gap_id);
  if (inferred.length === 0 || batch.comments.some((c) => c.kind === 'assumptions')) return [];
  return [
    `gap(s) ${inferred.join(', ')} closed as inferred: post a comment of kind "assumptions" in the same answer telling the humans what you assume`,
  ];
}

/**
 * Seed 004 "Answer handling": conflicting answers are surfaced as one decision. Closing the gap as
 * answered would pick a side silently; unless the humans said proceed (then the gap is closed as
 * inferred and the assumption told), exactly one question of the answer must quote each answer
 * (on its own line, or as the only question of a comment that quotes them) and ask for a decision.
 */
function conflictRules(batch: Batch, session: Session): string[] {
  const problems: string[] = [];
  const comments = batch.comments.filter((c) => c.kind !== 'proceed_gate');
  for (const conflict of newConflicts(session)) {
    const id = conflict.gap.id;
    const quotes = conflict.answers.map((a) => answerExcerpt(a.text));
    const where = `answers to gap ${id} disagree (${conflict.answers.map((a, i) => `@${a.author}: "${cut(quotes[i] ?? '', 60)}"`).join('; ')})`;
    if (batch.close.some((c) => c.gap_id === id && c.reason === 'answered'))
      problems.push(
        `${where}: do not close it as answered, which picks one of them (close it as inferred only when proceeding)`,
      );
    if (batch.ready.length > 0) continue;
    const quotesAll = (text: string) => quotes.every((q) => containsText(text, q));
    const surfacing = comments.flatMap((comment) => {
      const asked = explicitQuestions(comment.content);
      if (asked.length === 1 && quotesAll(comment.content)) return asked;
      return asked.filter(quotesAll);
    });
    if (surfacing.length !== 1)
      problems.push(
        `${where}: surface it in one question that quotes each answer and asks for a single decision${surfacing.length > 1 ? ` (${surfacing.length} do)` : ''}`,
      );
  }
  return problems;
}

/** "Assumption: X" and "Rationale: Y", each one line (the seed's own example puts both on one). */
export function isAssumption(note: string): boolean {
  const lines = note.split(/\r?\n/).filter((l) => l.trim());
  if (lines.length === 0 || lines.length > 2 || lines.some((l) => l.length > 400)) return false;
  const match = /^(.*?)\brationale\s*:\s*(.+)$/is.exec(lines.join('\n'));
  const assumption = (match?.[1] ?? '').replace(/^\s*assumption\s*:/i, '').trim();
  return assumption.length > 0 && (match?.[2] ?? '').trim().length > 0;
}

/**
 * Seed 004 "Learnings (v2)": v0 captures learnings from humans only; on a GitHub issue, from the
 * reporter and the assignees only (learning-source.ts).
 */
function learningRules(batch: Batch, session: Session): string[] {
  if (batch.learnings.length === 0) return [];
  if (!session.discussion.some((m) => m.from === 'human'))
    return ['learnings come from human messages only, and no human has written yet'];
  return batch.learnings.flatMap((l) => {
    const source = learningSource(session, l);
    return source.ok ? [] : [`learning "${cut(l.content)}" ${source.why}`];
  });
}

/** Seed 004 "ready_for_spec_generation" rules and "Assumption Handling". */
function readyRules(batch: Batch, ctx: ValidationContext): string[] {
  const { session } = ctx;
  const explicit = explicitProceed(session);
  const ready = batch.ready[0];
  if (!ready) {
    return explicit
      ? [
          `message ${explicit.id} is an explicit proceed signal ("${cut(explicit.text)}"): answer with ready_for_spec_generation, closing every open gap`,
        ]
      : [];
  }
  const problems: string[] = [];
  if (batch.ready.length > 1) problems.push('ready_for_spec_generation more than once');
  const after = humanAfterRelay(session);
  if (after.length === 0)
    problems.push(
      'ready_for_spec_generation needs a proceed signal: a human message after your last comment (ask with a proceed_gate comment and wait)',
    );
  else if (proceedCandidates(session).length === 0)
    problems.push(
      `ready_for_spec_generation needs a proceed signal from the reporter or an assignee: message(s) ${after.map((m) => `${m.id} by @${m.author}`).join(', ')} since your last comment are from neither, so none is one (treat them as ordinary answers)`,
    );
  if (batch.add.length > 0) problems.push('ready_for_spec_generation together with new questions');
  if (batch.comments.some((c) => c.kind === 'proceed_gate'))
    problems.push(
      'ready_for_spec_generation together with a proceed_gate comment: the human already said proceed',
    );
  const closing = new Map(batch.close.map((c) => [c.gap_id, c]));
  const open = session.gaps.filter((g) => g.status === 'open');
  const stillOpen = open.filter((g) => !closing.has(g.id));
  if (stillOpen.length > 0)
    problems.push(
      `gaps ${ids(stillOpen)} are still open: when proceeding, close every open gap (as inferred, with Assumption and Rationale)`,
    );
  // Seed 004 "Closing rules" 1: a proceed closes the remaining gaps "via inference (don't leave
  // them dangling)"; not_relevant would drop a question the humans were asked without telling them.
  const dropped = open.filter((g) => closing.get(g.id)?.reason === 'not_relevant');
  if (dropped.length > 0)
    problems.push(
      `gaps ${ids(dropped)} were open at the proceed signal: close them as inferred (Assumption and Rationale, told in the "assumptions" comment) or, if a human answered, as answered (verbatim), not as not_relevant`,
    );
  const closedAfter = session.gaps.filter((g) => g.status === 'closed' || closing.has(g.id));
  const reasonOf = (g: Gap) => closing.get(g.id)?.reason ?? g.closed_reason;
  for (const id of ready.closed_gap_ids)
    if (!closedAfter.some((g) => g.id === id))
      problems.push(`closed_gap_ids names gap ${id}, which is not closed`);
  const missing = closedAfter.filter(
    (g) => reasonOf(g) !== 'not_relevant' && !ready.closed_gap_ids.includes(g.id),
  );
  if (missing.length > 0)
    problems.push(`closed_gap_ids misses gaps ${ids(missing)} (closed as answered or inferred)`);
  for (const id of ready.learning_ids)
    if (!ctx.learnings.some((l) => l.id === id))
      problems.push(`learning_ids names learning ${id}, which does not exist`);
  for (const id of ready.relevant_finding_ids)
    if (!ctx.findingIds.includes(id))
      problems.push(`relevant_finding_ids names finding ${id}, which does not exist`);
  return problems;
}

function ids(gaps: readonly Gap[]): string {
  return gaps.map((g) => g.id).join(', ');
}

function cut(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
