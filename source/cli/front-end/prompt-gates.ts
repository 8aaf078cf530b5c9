import { createInterface, type Interface } from 'node:readline';
import type { GateAnswer, GatePort, GateRequest } from '../../engine/gates.js';

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
  const lines: string[] = [];
  let waiting: ((line: string | null) => void) | null = null;
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
    if (signal.aborted) return Promise.resolve(null);
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
      : 'Your answer (end with an empty line; an empty answer means no answer):\n',
  );
  const answer: string[] = [];
  for (;;) {
    const line = await nextLine(signal);
    if (line === null) break;
    if (line.trim() === '') break;
    answer.push(line);
  }
  if (answer.length === 0) return { decision: 'reject', by: signal.aborted ? 'nobody' : 'human' };
  return { decision: 'answer', by: 'human', text: answer.join('\n') };
}
