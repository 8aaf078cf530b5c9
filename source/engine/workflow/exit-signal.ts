import { fenceDepths } from '../agents/fences.js';

/**
 * Completion is `EXIT_SIGNAL: true` in the agent's own final answer (seed 002 §5), read strictly:
 * only the final answer text is looked at (never the prompt, a tool output or a file on disk),
 * only a line of its own counts (not one inside a quote or backticks), and the last such line
 * wins, so an explicit `EXIT_SIGNAL: false` beats words like "done" and an earlier true.
 *
 * Issue 15: a status block inside one code fence counts (agents copy the template as the prompt
 * showed it, fence and all), but a fenced example inside another fence does not; and the last
 * status wins over a line too: `EXIT_SIGNAL: true` followed by prose saying work remains is not
 * done (frankbria/ralph-claude-code reads the same).
 */
export type ExitSignal = 'true' | 'false' | 'absent';

const SIGNAL_LINE = /^\s*(?:[-*]\s*)?\**EXIT_SIGNAL\**\s*:\s*\**\s*(true|false)\s*\**\s*\.?\s*$/i;

export function readExitSignal(finalAnswer: string): ExitSignal {
  const last = lastSignalLine(finalAnswer);
  if (!last) return 'absent';
  if (last.value === 'true' && workRemainsAfter(finalAnswer, last.index)) return 'false';
  return last.value;
}

/** The last status line of an answer that counts, and where it is (its index among the lines). */
function lastSignalLine(answer: string): { index: number; value: 'true' | 'false' } | null {
  let last: { index: number; value: 'true' | 'false' } | null = null;
  for (const [index, { line, depth, fence }] of fenceDepths(answer).entries()) {
    if (fence || depth > 1 || /^\s*>/.test(line)) continue;
    const match = SIGNAL_LINE.exec(line);
    if (match) last = { index, value: (match[1] as string).toLowerCase() === 'true' ? 'true' : 'false' };
  }
  return last;
}

/**
 * Prose after the last `EXIT_SIGNAL: true` that says the work is not finished. A sentence that
 * negates it ("nothing remains", "no remaining tasks") is a report of completion, not of work left.
 */
const WORK_REMAINS =
  /\b(work remains|remaining (work|tasks?|items?|steps?)|still (need|needs|have|has|to|left|pending|failing|broken)|not (yet )?(done|finished|complete|completed)|not yet|left to do|to be done|(is|are) left|TODO|I will (now )?(continue|proceed|next|finish)|next,? I('ll| will)|in the next (iteration|loop|run|session)|incomplete)\b/i;
const NEGATED = /\b(no|nothing|none|zero|without|all)\b/i;

function workRemainsAfter(answer: string, index: number): boolean {
  const after = fenceDepths(answer)
    .slice(index + 1)
    .filter(({ depth, fence }) => depth === 0 && !fence)
    .map(({ line }) => line)
    .join(' ');
  return after
    .split(/(?<=[.!?;])\s+/)
    .some((sentence) => WORK_REMAINS.test(sentence) && !NEGATED.test(sentence));
}

/**
 * An answer that is nothing but a status block (key: value lines, markers, fences), however much
 * it looks like the prompt's example: judged by the evidence (git and the checks), not called a
 * copy (issue 15).
 */
export function isBareStatusBlock(answer: string): boolean {
  const lines = answer
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  return (
    lines.length > 0 &&
    lines.every(
      (l) =>
        /^(`{3,}|~{3,})\S*$/.test(l) ||
        /^[-=#*_]{3,}\s*[A-Z_ ]*[-=#*_]*$/.test(l) ||
        /^[-*]?\s*\**[A-Z][A-Z_]*\**\s*[:=]\s*\S.{0,80}$/.test(l),
    )
  );
}

/**
 * How much of the answer, up to and including its status line, is compared with the prompt, and
 * how long that stretch must be before it can be called a copy: an answer that is nothing but the
 * status line, or a word and the status line, is a (terse) report, never a copy.
 */
const COPY_CONTEXT_CHARS = 200;
const COPY_MIN_CHARS = 80;

/**
 * Whether the answer's status block is the prompt's own text rather than a report (issue 4:
 * completion is never "a copy of the prompt"). The rule: take the answer up to and including its
 * last status line, keep its last COPY_CONTEXT_CHARS characters (whitespace squeezed), and call it
 * a copy when that stretch is at least COPY_MIN_CHARS long and occurs verbatim in the prompt
 * (system and user prompt, whitespace squeezed the same way). An agent that echoes its prompt,
 * whole or just its closing instruction, ends on the prompt's words; one that reports ends on its
 * own, which the prompt cannot contain.
 */
export function copiesPrompt(finalAnswer: string, prompt: string): boolean {
  if (isBareStatusBlock(finalAnswer)) return false;
  const found = lastSignalLine(finalAnswer);
  if (!found) return false;
  const upToSignal = squeeze(
    finalAnswer
      .split('\n')
      .slice(0, found.index + 1)
      .join('\n'),
  );
  const tail = upToSignal.slice(-COPY_CONTEXT_CHARS).trimStart();
  return tail.length >= COPY_MIN_CHARS && squeeze(prompt).includes(tail);
}

function squeeze(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
