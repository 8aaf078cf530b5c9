/**
 * Completion is `EXIT_SIGNAL: true` in the agent's own final answer (seed 002 §5), read strictly:
 * only the final answer text is looked at (never the prompt, a tool output or a file on disk),
 * only a line of its own counts (not one inside a code fence, a quote or backticks), and the last
 * such line wins, so an explicit `EXIT_SIGNAL: false` beats words like "done" and an earlier true.
 */
export type ExitSignal = 'true' | 'false' | 'absent';

const SIGNAL_LINE = /^\s*(?:[-*]\s*)?\**EXIT_SIGNAL\**\s*:\s*\**\s*(true|false)\s*\**\s*\.?\s*$/i;

export function readExitSignal(finalAnswer: string): ExitSignal {
  return lastSignalLine(finalAnswer)?.value ?? 'absent';
}

/** The last status line of an answer that counts, and where it is (its index among the lines). */
function lastSignalLine(answer: string): { index: number; value: 'true' | 'false' } | null {
  let inFence = false;
  let last: { index: number; value: 'true' | 'false' } | null = null;
  for (const [index, line] of answer.split('\n').entries()) {
    if (/^\s*(```|~~~)/.test(line)) {
      inFence = !inFence;
      continue;
    }
    if (inFence || /^\s*>/.test(line)) continue;
    const match = SIGNAL_LINE.exec(line);
    if (match) last = { index, value: (match[1] as string).toLowerCase() === 'true' ? 'true' : 'false' };
  }
  return last;
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
