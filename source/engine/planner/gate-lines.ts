import { lastRelayId } from './batch.js';
import { openGaps } from './context-dump.js';
import { explicitQuestions, stripMarkers } from './questions.js';
import type { Gap, Message, Respondent, Session } from './schemas.js';

/**
 * What the human sees at a plan gate: the planner's latest words, then its open questions as
 * numbered batches per respondent (seed 004 "Keep it easy to answer": numbered questions, one
 * line of why it matters, batched by respondent), numbered by gap id so "2: yes" answers gap 2.
 */

export interface GateText {
  readonly title: string;
  readonly lines: string[];
}

const RESPONDENT_LABEL: Record<Respondent, string> = {
  reporter: 'For the reporter (what the product must do)',
  assignee: 'For the assignee (how the code should do it)',
};

export function questionGate(session: Session): GateText {
  const open = openGaps(session.gaps);
  const latest = latestComments(session);
  const asksProceed = latest.some((m) => m.kind === 'proceed_gate');
  const title =
    open.length > 0
      ? `Planner, round ${Math.max(1, session.rounds)}: ${open.length} open question${open.length === 1 ? '' : 's'}`
      : asksProceed
        ? 'Planner: enough to draft the spec. Proceed?'
        : 'Planner: anything to add before the spec?';
  const lines = [
    ...latest.flatMap(commentLines),
    ...(['reporter', 'assignee'] as const).flatMap((r) => batch(r, open)),
    '',
    open.length > 0
      ? 'Answer by number ("1: keep them", several lines are fine) or in your own words; "proceed" goes on to the spec, the planner assuming what is still open.'
      : 'Reply in your own words, or "proceed" to go on to the spec.',
  ];
  return { title, lines: lines[0] === '' ? lines.slice(1) : lines };
}

/** The yes/no question after the human declined to answer (or nobody could). */
export function proceedGate(session: Session): GateText {
  const open = openGaps(session.gaps);
  return {
    title: 'Proceed to the specification without answering?',
    lines: [
      ...(open.length > 0
        ? [
            `The planner will close ${open.length} open question${open.length === 1 ? '' : 's'} with assumptions it states:`,
            ...open.map((g) => `  ${g.id}. ${g.question}`),
          ]
        : ['No question is open.']),
      'y: proceed to the spec   n: stop here (ralphy start resumes planning; answers so far are kept)',
    ],
  };
}

/** The planner's comments since the human last spoke. */
function latestComments(session: Session): Message[] {
  const lastHuman = session.discussion.findLast((m) => m.from === 'human')?.id ?? 0;
  const last = lastRelayId(session);
  return session.discussion.filter((m) => m.from === 'relay' && m.id > lastHuman && m.id <= last);
}

/** A questions comment shows its preface (the questions follow from the gaps); others in full. */
function commentLines(m: Message): string[] {
  const all = m.text.split(/\r?\n/).filter((l) => l.trim().length > 0);
  const asked = new Set(explicitQuestions(m.text));
  const shown = m.kind === 'questions' ? prefaceOf(all, asked) : all;
  return shown.map((line, i) => (i === 0 ? `Relay: ${line}` : `       ${line}`));
}

function prefaceOf(lines: string[], asked: Set<string>): string[] {
  const first = lines.findIndex((l) => asked.has(stripMarkers(l.trim())) || /^\s*\d{1,3}[.)]\s/.test(l));
  return first < 0 ? lines : lines.slice(0, first);
}

function batch(respondent: Respondent, open: readonly Gap[]): string[] {
  const mine = open.filter((g) => g.respondent === respondent);
  if (mine.length === 0) return [];
  return [
    '',
    `${RESPONDENT_LABEL[respondent]}:`,
    ...mine.flatMap((g) => [
      `  ${g.id}. ${g.question}${g.severity === 'blocking' ? ' (blocking)' : ''}`,
      ...(g.why ? [`     why: ${g.why}`] : []),
    ]),
  ];
}
