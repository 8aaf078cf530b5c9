import { createInterface, type Interface } from 'node:readline';
import type { GateAnswer, GatePort, GateRequest } from '../../engine/index.js';

/**
 * The plain front end's gates on a terminal (seed 002 §9: `Approve? [y/n]: _`). A yes/no gate
 * reads one line until it is y or n; a text gate (an agent's question, a denied permission) reads
 * lines until an empty one, so an answer may span several lines. The wait has no limit; an abort
 * or interrupt ends it as "nobody answered", never as a "no".
 */
export function promptGates(
  input: NodeJS.ReadableStream,
  output: { write(text: string): unknown },
): GatePort & {
  close(): void;
} {
  let rl: Interface | null = null;
  // Lines that arrive together (a paste) belong to the gate being answered; anything typed while
  // no gate was open is dropped when the next one opens, so a stray "y" never approves it.
  const lines: string[] = [];
  let waiting: ((line: string | null) => void) | null = null;
  let ended = false;
  const open = (): Interface => {
    if (rl) return rl;
    rl = createInterface({ input, terminal: false });
    rl.on('line', (line) => {
      if (waiting) {
        const resolve = waiting;
        waiting = null;
        resolve(line);
      } else lines.push(line);
    });
    rl.on('close', () => {
      ended = true;
      const resolve = waiting;
      waiting = null;
      resolve?.(null);
    });
    return rl;
  };
  const nextLine = (signal: AbortSignal): Promise<string | null> => {
    open();
    const queued = lines.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    // After end of input (Ctrl-D) nobody can answer any more: never wait for a line again.
    if (signal.aborted || ended) return Promise.resolve(null);
    return new Promise((resolve) => {
      const onAbort = () => {
        waiting = null;
        resolve(null);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      waiting = (line) => {
        signal.removeEventListener('abort', onAbort);
        resolve(line);
      };
    });
  };
  return {
    async ask(request: GateRequest, signal: AbortSignal): Promise<GateAnswer> {
      lines.length = 0;
      if (request.answer === 'text') return askText(signal, nextLine, output, request.gate === 'plan');
      for (;;) {
        output.write(`${VERB[request.gate] ?? 'Approve'}? [y/n]: `);
        const line = await nextLine(signal);
        if (line === null) return { decision: 'reject', by: 'nobody' };
        const word = line.trim().toLowerCase();
        if (word === 'y' || word === 'yes') return { decision: 'approve', by: 'human' };
        if (word === 'n' || word === 'no') return { decision: 'reject', by: 'human' };
        output.write('Please answer y or n.\n');
      }
    },
    close() {
      rl?.close();
    },
  };
}

const VERB: Partial<Record<GateRequest['gate'], string>> = { resume: 'Resume', plan: 'Proceed' };

async function askText(
  signal: AbortSignal,
  nextLine: (signal: AbortSignal) => Promise<string | null>,
  output: { write(text: string): unknown },
  plan: boolean,
): Promise<GateAnswer> {
  output.write(
    plan
      ? 'Your answer ("1: …" per question, or your own words, or proceed; end with an empty line):\n'
      : 'Your answer (end with an empty line; type "skip" to give none):\n',
  );
  const answer: string[] = [];
  let gone = false;
  for (;;) {
    const line = await nextLine(signal);
    if (line === null) {
      gone = true; // interrupted, or the input ended: nobody is there to answer
      break;
    }
    if (line.trim() === '') {
      if (answer.length > 0) break;
      // A stray Enter is not an answer: the question stays open.
      output.write('(an answer, or "skip")\n');
      continue;
    }
    answer.push(line);
  }
  if (answer.length === 1 && answer[0]?.trim().toLowerCase() === 'skip')
    return { decision: 'reject', by: 'human' };
  if (answer.length === 0) return { decision: 'reject', by: gone ? 'nobody' : 'human' };
  return { decision: 'answer', by: 'human', text: answer.join('\n') };
}
