import { fenceDepths } from './fences.js';

/**
 * Whether an answer ends by asking the human for something (issue 15, "Questions"): it raises the
 * question gate, never a retry. Three shapes are read as "needs input":
 * - the last paragraph ends with "?" (the plain question);
 * - numbered or bulleted questions followed by a closing request ("please provide more details",
 *   "please clarify", "let me know which"), with or without a question mark of its own, or a
 *   question in the last paragraph that such a request closes ("A or B? Please confirm.");
 * - a wait for a go-ahead without any question mark ("I'll wait for your go-ahead before I
 *   proceed", "Awaiting your confirmation").
 * Status lines (`EXIT_SIGNAL: false`, a status block) after the question are set aside first: a
 * question followed by the prompt's `EXIT_SIGNAL: false` is still a question.
 */

const MAX_QUESTION_CHARS = 1000;

/** A closing request for information or a decision. */
const ASKS_FOR_INPUT =
  /\b(please (provide|clarify|specify|confirm|advise|share|tell me|let me know|answer)|let me know (which|what|how|whether|if you (want|would like|prefer))|(could|can|would) you (please )?(provide|clarify|confirm|specify|tell|share)|I need (more )?(details|information|clarification|your (input|answer|decision))|need(s)? clarification)\b/i;
/** Waiting for a human go-ahead, question mark or not. */
const WAITS_FOR_GO_AHEAD =
  /\b((wait(ing)?|await(ing)?) (for )?(your )?(go-ahead|go ahead|confirmation|approval|decision|input|answer|instructions?|response)|before (I|we) (proceed|continue|start|go ahead|make (any|these|the) changes)|(once|when|after) you (confirm|approve|give the go-ahead|reply|decide)|shall I (proceed|go ahead|continue)|should I (proceed|go ahead|continue)|do you want me to (proceed|continue|go ahead)|(say|reply) "?(go|yes|proceed)"?|I('ll| will) hold off)\b/i;
/** Question lines a list asks: "1. Which database should I use?" */
const LISTED_QUESTION = /^\s*(\d+[.)]|[-*])\s+.*\?\s*$/;

export function questionOf(answer: string): string | null {
  const body = withoutStatusLines(answer).trim();
  if (!body) return null;
  const paragraphs = body.split(/\n\s*\n/);
  const last = (paragraphs.at(-1) ?? '').trim();
  if (last.endsWith('?')) return clip(listedContext(paragraphs, last));
  if (WAITS_FOR_GO_AHEAD.test(last)) return clip(listedContext(paragraphs, last));
  // A question closed by a request in the same paragraph: "Should it say A or B? Please confirm."
  if (last.includes('?') && ASKS_FOR_INPUT.test(last)) return clip(listedContext(paragraphs, last));
  const lines = body.split('\n');
  const listed = lines.filter((l) => LISTED_QUESTION.test(l));
  if (listed.length > 0 && ASKS_FOR_INPUT.test(last)) return clip(listedContext(paragraphs, last));
  return null;
}

/** The last paragraph, with the numbered questions just before it when there are some. */
function listedContext(paragraphs: string[], last: string): string {
  const before = (paragraphs.at(-2) ?? '').trim();
  const asks = before.split('\n').some((l) => LISTED_QUESTION.test(l));
  return asks && before !== last ? `${before}\n\n${last}` : last;
}

function clip(text: string): string {
  return text.length > MAX_QUESTION_CHARS ? text.slice(-MAX_QUESTION_CHARS) : text;
}

/** The answer without its status lines and the fences or markers around them. */
function withoutStatusLines(answer: string): string {
  return fenceDepths(answer)
    .filter(({ line, fence }) => !fence && !isStatusLine(line))
    .map(({ line }) => line)
    .join('\n');
}

function isStatusLine(line: string): boolean {
  const l = line.trim();
  return (
    /^\**(EXIT_SIGNAL|STATUS|TASKS_COMPLETED_THIS_LOOP|FILES_MODIFIED|TESTS_STATUS|WORK_TYPE|RECOMMENDATION)\**\s*:/i.test(
      l,
    ) || /^-{3}\s*(END_)?RALPH_STATUS\s*-{3}$/i.test(l)
  );
}
