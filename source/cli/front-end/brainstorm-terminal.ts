import { createInterface } from 'node:readline';
import { type BrainstormAnswers, parseAnswers, QUESTIONS } from '../../engine/index.js';
import { type CommandIo, println } from '../io.js';

/**
 * The brainstorm at a terminal (seed 003 P2 is human-driven): one question at a time, lists one
 * item a line ended by an empty line. Lines are queued as they arrive, so typed-ahead or pasted
 * answers are never lost; the end of input (Ctrl-D) or an interrupt (Ctrl-C, which the engine
 * session owns) ends the brainstorm with nothing written.
 */

export interface Terminal {
  /** The next line, or null at the end of input. */
  ask(prompt: string): Promise<string | null>;
  close(): void;
}

export function openTerminal(io: CommandIo, signal: AbortSignal): Terminal {
  const rl = createInterface({ input: io.stdin as NodeJS.ReadableStream, terminal: false });
  const lines: string[] = [];
  const waiting: ((line: string | null) => void)[] = [];
  let closed = false;
  const end = () => {
    closed = true;
    for (const w of waiting.splice(0)) w(null);
  };
  rl.on('line', (line) => {
    const next = waiting.shift();
    if (next) next(line);
    else lines.push(line);
  });
  rl.on('close', end);
  signal.addEventListener('abort', end, { once: true });
  return {
    ask(prompt) {
      io.stdout.write(prompt);
      if (signal.aborted) return Promise.resolve(null);
      const queued = lines.shift();
      if (queued !== undefined) return Promise.resolve(queued);
      if (closed) return Promise.resolve(null);
      return new Promise((resolve) => waiting.push(resolve));
    },
    close: () => {
      signal.removeEventListener('abort', end);
      rl.close();
    },
  };
}

class EndOfInput extends Error {}

async function line(t: Terminal, prompt: string, optional = false): Promise<string> {
  for (;;) {
    const answer = await t.ask(prompt);
    if (answer === null) throw new EndOfInput();
    if (answer.trim() || optional) return answer.trim();
  }
}

async function list(t: Terminal, io: CommandIo, title: string, optional: boolean): Promise<string[]> {
  println(
    io.stdout,
    `${title}\n  (one a line; an empty line ends the list${optional ? '; none is fine' : ''})`,
  );
  const items: string[] = [];
  for (;;) {
    const item = await line(t, '  - ', true);
    if (item === '') {
      if (items.length > 0 || optional) return items;
      println(io.stdout, '  at least one, please');
      continue;
    }
    items.push(item);
  }
}

export async function askYesNo(t: Terminal, question: string): Promise<boolean> {
  const answer = await t.ask(`${question} [y/N] `);
  return answer !== null && /^y(es)?$/i.test(answer.trim());
}

/** The answers, checked by the same schema as an answers file; null when the human stopped. */
export async function askBrainstorm(t: Terminal, io: CommandIo): Promise<BrainstormAnswers | null> {
  try {
    println(
      io.stdout,
      '\nBrainstorm: your answers become VISION.md, PROJECT.md, REQUIREMENTS.md and ROADMAP.md.',
    );
    println(io.stdout, 'Nothing is written until you have seen the documents and said yes. Ctrl-D stops.\n');
    const answers: Record<string, unknown> = {};
    for (const q of QUESTIONS)
      answers[q.key] = q.list ? await list(t, io, q.text, q.optional) : await line(t, `${q.text}\n> `);
    const reqs = await list(t, io, 'Requirements (what it must do)', false);
    const requirements = reqs.map((text, i) => ({ id: `R${i + 1}`, text }));
    println(io.stdout, `Requirements: ${requirements.map((r) => `${r.id} ${r.text}`).join('; ')}`);
    const phases = await askPhases(
      t,
      io,
      requirements.map((r) => r.id),
    );
    const parsed = parseAnswers(JSON.stringify({ ...answers, requirements, phases }));
    if (!parsed.ok) {
      println(io.stdout, `These answers do not make the documents: ${parsed.reason}`);
      return null;
    }
    return parsed.answers;
  } catch (error) {
    if (error instanceof EndOfInput) {
      println(io.stdout, '\nBrainstorm stopped.');
      return null;
    }
    throw error;
  }
}

async function askPhases(t: Terminal, io: CommandIo, ids: readonly string[]): Promise<unknown[]> {
  println(io.stdout, '\nRoadmap: phases in order, each delivering some requirements.');
  const phases: { id: string; name: string; goal: string; requirements: string[]; success: string[] }[] = [];
  for (;;) {
    const planned = new Set(phases.flatMap((p) => p.requirements));
    const left = ids.filter((id) => !planned.has(id));
    if (left.length === 0) return phases;
    const id = `P${phases.length + 1}`;
    println(io.stdout, `Not in a phase yet: ${left.join(', ')}`);
    const name = await line(t, `${id} name\n> `);
    const goal = await line(t, `${id} goal\n> `);
    let requirements: string[] = [];
    for (;;) {
      const words = (
        await line(t, `${id} delivers which requirements? (e.g. ${left.slice(0, 2).join(', ')})\n> `)
      )
        .split(/[\s,]+/)
        .map((w) => w.toUpperCase())
        .filter(Boolean);
      const unknown = words.filter((w) => !ids.includes(w));
      if (unknown.length === 0) {
        requirements = [...new Set(words)];
        break;
      }
      println(io.stdout, `  not requirements: ${unknown.join(', ')}`);
    }
    const success = await list(t, io, `${id} success criteria`, false);
    phases.push({ id, name, goal, requirements, success });
  }
}
