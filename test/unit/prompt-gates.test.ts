import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { promptGates } from '../../source/cli/front-end/prompt-gates.js';

// The plain front end's gates on a terminal (seed 002 §9 `[y/n]`), driven through a stream.

function harness() {
  const input = new PassThrough();
  let shown = '';
  const gates = promptGates(input, { write: (t: string) => (shown += t) });
  return { input, gates, shown: () => shown };
}

const yesNo = { gate: 'spec' as const, title: 'Approve?', lines: [], answer: 'yes_no' as const };
const text = { gate: 'input' as const, title: 'Question', lines: ['Formal?'], answer: 'text' as const };

describe('plain [y/n] gates', () => {
  it('asks again until the answer is y or n', async () => {
    const { input, gates, shown } = harness();
    const answer = gates.ask(yesNo, new AbortController().signal);
    input.write('maybe\n');
    input.write('Y\n');
    expect(await answer).toEqual({ decision: 'approve', by: 'human' });
    expect(shown()).toBe('Approve? [y/n]: Please answer y or n.\nApprove? [y/n]: ');
    const second = gates.ask(yesNo, new AbortController().signal);
    input.write('no\n');
    expect(await second).toEqual({ decision: 'reject', by: 'human' });
    gates.close();
  });

  it('a text answer spans lines until an empty one; a stray Enter is not an answer, "skip" is none', async () => {
    const { input, gates, shown } = harness();
    const answer = gates.ask(text, new AbortController().signal);
    input.write('Formal,\nalways.\n\n');
    expect(await answer).toEqual({ decision: 'answer', by: 'human', text: 'Formal,\nalways.' });
    const skipped = gates.ask(text, new AbortController().signal);
    input.write('\n');
    input.write('skip\n\n');
    expect(await skipped).toEqual({ decision: 'reject', by: 'human' });
    expect(shown()).toContain('(an answer, or "skip")');
    gates.close();
  });

  it('lines typed while no gate was open never answer the next one', async () => {
    const { input, gates } = harness();
    const first = gates.ask(yesNo, new AbortController().signal);
    input.write('n\n');
    expect(await first).toEqual({ decision: 'reject', by: 'human' });
    input.write('y\n'); // typed ahead, before the QA gate opens
    await new Promise<void>((resolve) => setImmediate(resolve));
    const second = gates.ask(yesNo, new AbortController().signal);
    input.write('n\n');
    expect(await second).toEqual({ decision: 'reject', by: 'human' });
    gates.close();
  });

  it('an abort while waiting is nobody answering, never a "no"; end of input likewise', async () => {
    const { input, gates } = harness();
    const controller = new AbortController();
    const answer = gates.ask(yesNo, controller.signal);
    controller.abort();
    expect(await answer).toEqual({ decision: 'reject', by: 'nobody' });
    const ended = gates.ask(yesNo, new AbortController().signal);
    input.end();
    expect(await ended).toEqual({ decision: 'reject', by: 'nobody' });
    // After end of input every later gate is answered by nobody at once, never waited on.
    expect(await gates.ask(text, new AbortController().signal)).toEqual({ decision: 'reject', by: 'nobody' });
    gates.close();
  });
});
