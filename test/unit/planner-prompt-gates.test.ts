import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { formatPlain } from '../../source/cli/front-end/plain-reporter.js';
import { promptGates } from '../../source/cli/front-end/prompt-gates.js';

// The plain front end at the planner's gates (seed 004): a multi-line answer by gap id, and a
// `Proceed? [y/n]` when the human would rather not answer.

function harness() {
  const input = new PassThrough();
  let shown = '';
  const gates = promptGates(input, { write: (t: string) => (shown += t) });
  return { input, gates, shown: () => shown };
}

const questions = {
  gate: 'plan' as const,
  title: 'Planner, round 1: 2 open questions',
  lines: [],
  answer: 'text' as const,
};
const proceed = { gate: 'plan' as const, title: 'Proceed?', lines: [], answer: 'yes_no' as const };

describe('plan gates on a terminal (plain front end)', () => {
  it('answers by gap id over several lines, until an empty line', async () => {
    const { input, gates, shown } = harness();
    const answer = gates.ask(questions, new AbortController().signal);
    input.write('1: first name\n2: English only\n\n');
    expect(await answer).toEqual({ decision: 'answer', by: 'human', text: '1: first name\n2: English only' });
    expect(shown()).toBe(
      'Your answer ("1: …" per question, or your own words, or proceed; end with an empty line):\n',
    );
    gates.close();
  });

  it('the proceed question is asked as Proceed? [y/n]', async () => {
    const { input, gates, shown } = harness();
    const answer = gates.ask(proceed, new AbortController().signal);
    input.write('y\n');
    expect(await answer).toEqual({ decision: 'approve', by: 'human' });
    expect(shown()).toBe('Proceed? [y/n]: ');
    gates.close();
  });

  it("the plain lines: the plan gate's title as is, what the planner's answer changed, the assumptions", () => {
    const at = '2025-01-01T10:00:00.000Z';
    expect(
      formatPlain({
        type: 'gate.requested',
        gate: 'plan',
        title: 'Planner, round 1',
        lines: ['  1. Q?'],
        answer: 'text',
        at,
      }),
    ).toBe('=== Planner, round 1 ===\n    1. Q?');
    expect(
      formatPlain({
        type: 'planner.actions',
        session_id: 's',
        round: 1,
        comments: [{ kind: 'questions', content: '1) Q?' }],
        gaps_added: [{ id: 1, question: 'Q?', respondent: 'reporter', severity: 'high', why: null }],
        gaps_closed: [],
        learnings_added: [],
        open_gaps: 1,
        at,
      }),
    ).toBe('Planner: 1 question(s) asked (round 1), 1 comment(s); 1 open');
    expect(
      formatPlain({
        type: 'planner.ready',
        session_id: 's',
        context_summary: 'Sum.',
        closed_gap_ids: [1],
        learning_ids: [],
        assumptions: [{ gap_id: 1, question: 'Q?', note: 'Assumption: a.\nRationale: b.' }],
        at,
      }),
    ).toBe(
      'Planner: ready for the spec (1 decision(s)): Sum.\n  Proceeding under these assumptions:\n    gap 1 (Q?): Assumption: a. ⏎ Rationale: b.',
    );
  });
});
