/**
 * Completion is `EXIT_SIGNAL: true` in the agent's own final answer (seed 002 §5), read strictly:
 * only the final answer text is looked at (never the prompt, a tool output or a file on disk),
 * only a line of its own counts (not one inside a code fence, a quote or backticks), and the last
 * such line wins, so an explicit `EXIT_SIGNAL: false` beats words like "done" and an earlier true.
 */
export type ExitSignal = 'true' | 'false' | 'absent';

const SIGNAL_LINE = /^\s*(?:[-*]\s*)?\**EXIT_SIGNAL\**\s*:\s*\**\s*(true|false)\s*\**\s*\.?\s*$/i;

export function readExitSignal(finalAnswer: string): ExitSignal {
  let inFence = false;
  let last: ExitSignal = 'absent';
  for (const line of finalAnswer.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) {
      inFence = !inFence;
      continue;
    }
    if (inFence || /^\s*>/.test(line)) continue;
    const match = SIGNAL_LINE.exec(line);
    if (match) last = (match[1] as string).toLowerCase() === 'true' ? 'true' : 'false';
  }
  return last;
}
