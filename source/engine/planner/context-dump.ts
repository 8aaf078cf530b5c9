import { explicitProceed, humanAfterRelay, lastRelayId, proceedCandidates } from './batch.js';
import { answerExcerpt, newConflicts } from './conflicts.js';
import type { Gap, Learning, Message, Session } from './schemas.js';

/**
 * The context dump (seed 004 "Orchestrator ↔ Planner Contract (v2)"): the planner is stateless,
 * so every run gets the issue (or PRD), reporter and assignee, the discussion so far, the
 * workspace's learnings, all open gaps and the last 10 closed ones (most recent first), and the
 * optional code findings, rebuilt from the stored session each time.
 */

export interface SubjectView {
  /** "PRD.md" or "GitHub issue #12". */
  readonly source: string;
  readonly title: string;
  readonly body: string;
  /** Who the reporter is, in words ("@pm", "the PRD's author, at this terminal"). */
  readonly reporter: string;
  readonly assignee: string;
}

export interface Finding {
  readonly id: string;
  readonly text: string;
}

export interface DumpInput {
  readonly subject: SubjectView;
  readonly session: Session;
  readonly learnings: readonly Learning[];
  readonly findings: readonly Finding[];
  readonly maxRounds: number;
  readonly maxQuestions: number;
  /** Characters of discussion kept (the oldest messages go first). */
  readonly discussionChars: number;
  readonly learningsShown: number;
}

/** Seed 004 "Context inclusion rule". */
export const CLOSED_GAPS_SHOWN = 10;
const BODY_CHARS = 30_000;

export function contextDump(input: DumpInput): string {
  const { subject, session } = input;
  return [
    '=== ISSUE ===',
    `Source: ${subject.source}`,
    `Title: ${subject.title}`,
    `Reporter: ${subject.reporter}`,
    `Assignee: ${subject.assignee}`,
    'Any human may answer any question.',
    '',
    '=== BODY ===',
    cap(subject.body.trim() || '(empty)', BODY_CHARS),
    '',
    '=== DISCUSSION (oldest first) ===',
    ...discussion(session.discussion, input.discussionChars),
    '',
    '=== LEARNINGS (workspace-level, newest first) ===',
    ...learnings(input.learnings, input.learningsShown),
    '',
    '=== OPEN GAPS ===',
    ...orNone(openGaps(session.gaps).map(gapLine)),
    '',
    `=== CLOSED GAPS (the last ${CLOSED_GAPS_SHOWN}, most recent first) ===`,
    ...orNone(closedGaps(session.gaps).map(gapLine)),
    '',
    '=== CODE FINDINGS ===',
    ...(input.findings.length > 0
      ? input.findings.map((f) => `[finding ${f.id}] ${f.text}`)
      : ['(none collected; read the repository with your tools when it prevents a dumb question)']),
    '',
    '=== STATE ===',
    ...stateLines(input),
  ].join('\n');
}

/** All open gaps, by id. */
export function openGaps(gaps: readonly Gap[]): Gap[] {
  return gaps.filter((g) => g.status === 'open').sort((a, b) => a.id - b.id);
}

/** The last 10 closed gaps, most recently closed first. */
export function closedGaps(gaps: readonly Gap[]): Gap[] {
  return gaps
    .filter((g) => g.status === 'closed')
    .sort((a, b) => (b.closed_at ?? '').localeCompare(a.closed_at ?? '') || b.id - a.id)
    .slice(0, CLOSED_GAPS_SHOWN);
}

function gapLine(gap: Gap): string {
  const head = `[gap ${gap.id}] (${gap.severity}, respondent: ${gap.respondent}, round ${gap.round}) ${gap.question}`;
  if (gap.status === 'open')
    return [head, ...(gap.evidence ? [`    evidence: ${gap.evidence}`] : [])].join('\n');
  const note = gap.closed_note ? `: ${gap.closed_note.replace(/\n/g, ' / ')}` : '';
  return `${head}\n    closed as ${gap.closed_reason}${note}`;
}

function discussion(messages: readonly Message[], maxChars: number): string[] {
  if (messages.length === 0) return ['(no messages yet)'];
  const blocks = messages.map(messageBlock);
  const kept: string[] = [];
  let size = 0;
  for (let i = blocks.length - 1; i >= 0; i--) {
    const block = blocks[i] as string;
    if (kept.length > 0 && size + block.length > maxChars) {
      kept.unshift(`(${i + 1} earlier message(s) left out)`);
      break;
    }
    kept.unshift(block);
    size += block.length;
  }
  return kept;
}

function messageBlock(m: Message): string {
  const who = m.from === 'relay' ? 'relay (you)' : `human @${m.author}${m.role ? ` (${m.role})` : ''}`;
  const lines = [`[message ${m.id}] ${who} · ${m.kind}`, ...m.text.split('\n').map((l) => `  ${l}`)];
  for (const a of m.answers) lines.push(`  → answers gap ${a.gap_id}: ${a.text.replace(/\n/g, ' / ')}`);
  return lines.join('\n');
}

function learnings(all: readonly Learning[], shown: number): string[] {
  const newest = [...all].sort((a, b) => b.id - a.id).slice(0, shown);
  return orNone(newest.map((l) => `[learning ${l.id}] ${l.type}: ${l.content}`));
}

function stateLines(input: DumpInput): string[] {
  const { session } = input;
  const after = humanAfterRelay(session);
  const candidates = proceedCandidates(session);
  const explicit = explicitProceed(session);
  const last = lastRelayId(session);
  const roundsLeft = Math.max(0, input.maxRounds - session.rounds);
  const conflicts = newConflicts(session).map(
    (c) =>
      `Answers to gap ${c.gap.id} disagree: ${c.answers.map((a) => `@${a.author} (message ${a.messageId}): "${answerExcerpt(a.text)}"`).join('; ')}. Surface it in one question that quotes each of these answers and asks for a single decision; do not close gap ${c.gap.id} as answered (when proceeding, close it as inferred).`,
  );
  return [
    `Question rounds used: ${session.rounds} of ${input.maxRounds} (planner.max_rounds)${roundsLeft === 0 ? ': no new questions; ask to proceed' : ''}; at most ${input.maxQuestions} new questions per answer.`,
    explicit
      ? `Proceed signal: message ${explicit.id} is an explicit proceed ("${explicit.text.trim().slice(0, 80)}"): answer with ready_for_spec_generation now.`
      : after.length > 0
        ? `Human messages since your last comment${last ? ` (message ${last})` : ''}: ${after.map((m) => m.id).join(', ')}. ${proceedHint(after, candidates)}`
        : last > 0
          ? `No human message since your last comment (message ${last}).`
          : 'You have not commented yet.',
    ...conflicts,
  ];
}

/** On an issue only the reporter's and the assignees' messages can be a proceed signal. */
function proceedHint(after: readonly Message[], candidates: readonly Message[]): string {
  if (candidates.length === after.length) return 'Judge whether one is a proceed signal.';
  if (candidates.length === 0)
    return 'None is from the reporter or an assignee, so none is a proceed signal: read them as ordinary answers, and do not answer with ready_for_spec_generation.';
  return `Only ${candidates.map((m) => m.id).join(', ')} (from the reporter or an assignee) can be a proceed signal: judge whether one is; read the others as ordinary answers.`;
}

function orNone(lines: string[]): string[] {
  return lines.length > 0 ? lines : ['(none)'];
}

function cap(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}\n… (truncated)` : text;
}
