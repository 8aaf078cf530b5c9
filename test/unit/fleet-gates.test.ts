import { describe, expect, it } from 'vitest';
import {
  type AnsweredGate,
  answerForAgent,
  type GateReply,
  stepGates,
  waitFor,
} from '../../source/engine/fleet/gate-wait.js';
import { parseGateComment } from '../../source/engine/fleet/github-gates.js';
import type { GateRequest } from '../../source/engine/gates.js';

// Issue 20: how a fleet step's gates are answered from a durable wait, and what a GitHub comment
// must say to answer one (pure parts; the waits themselves run on a real database in
// test/integration/fleet-gates.test.ts).

const signal = new AbortController().signal;
const spec: GateRequest = {
  gate: 'spec',
  title: 'Approve the specification and tasks?',
  lines: ['1. A'],
  answer: 'yes_no',
};
const question: GateRequest = {
  gate: 'plan',
  title: 'Planner, round 1: 1 open question',
  lines: ['Q?'],
  answer: 'text',
};
const proceed: GateRequest = {
  gate: 'plan',
  title: 'Proceed under these assumptions?',
  lines: [],
  answer: 'yes_no',
};
const reply = (wait: string, patch: Partial<GateReply>): GateReply => ({
  wait,
  decision: 'approve',
  reason: null,
  text: null,
  by: 'alice (relais approve)',
  ...patch,
});
const answered = (request: GateRequest, patch: Partial<GateReply>): AnsweredGate => {
  const wait = waitFor(request, 'run-1#3');
  return { wait, reply: reply(wait.id, patch) };
};

describe('a fleet step’s gates', () => {
  it('nobody answered yet: the first gate asked is the one the run waits at, every gate gets "nobody"', async () => {
    const gates = stepGates(null, false);
    expect(await gates.port.ask(question, signal)).toEqual({ decision: 'reject', by: 'nobody' });
    expect(await gates.port.ask(proceed, signal)).toEqual({ decision: 'reject', by: 'nobody' });
    expect(gates.pending()).toBe(question);
    // Resuming its own workflow is never a question.
    expect(await gates.port.ask({ ...spec, gate: 'resume' }, signal)).toEqual({
      decision: 'approve',
      by: 'auto',
    });
  });

  it('the answer goes to the same gate asked again, once; another question is not answered by it', async () => {
    const gates = stepGates(answered(question, { decision: 'answer', text: 'Only the first name.' }), false);
    const other = { ...question, lines: ['Another question?'] };
    expect(await gates.port.ask(other, signal)).toEqual({ decision: 'reject', by: 'nobody' });
    expect(await gates.port.ask(question, signal)).toEqual({
      decision: 'answer',
      text: 'Only the first name.',
      by: 'human',
    });
    expect(await gates.port.ask(question, signal)).toEqual({ decision: 'reject', by: 'nobody' });
  });

  it('a spec reject carries its reason; submit --yes approves yes/no gates on nobody’s behalf, never a question', async () => {
    const rejected = stepGates(answered(spec, { decision: 'reject', reason: 'Split task 1.' }), false);
    expect(await rejected.port.ask(spec, signal)).toEqual({
      decision: 'reject',
      by: 'human',
      reason: 'Split task 1.',
    });
    const auto = stepGates(null, true);
    expect(await auto.port.ask(spec, signal)).toEqual({ decision: 'approve', by: 'auto' });
    expect(await auto.port.ask(question, signal)).toEqual({ decision: 'reject', by: 'nobody' });
    expect(auto.pending()).toBe(question);
  });

  it('--yes on a question: declined, then the yes/no that follows it (the planner’s proceed) approved', async () => {
    const gates = stepGates(answered(question, { decision: 'approve' }), false);
    expect(await gates.port.ask(question, signal)).toEqual({ decision: 'reject', by: 'human' });
    expect(await gates.port.ask(proceed, signal)).toEqual({ decision: 'approve', by: 'human' });
    expect(gates.pending()).toBeNull();
  });

  it("an agent's answer goes to its next run with the question it answers", () => {
    const input: GateRequest = {
      gate: 'input',
      title: 'dev-agent needs input',
      lines: ['Trim the name?'],
      answer: 'text',
    };
    expect(answerForAgent(answered(input, { decision: 'answer', text: 'Yes.' }))).toBe(
      'You asked: Trim the name?\nThe human answered: Yes.',
    );
    expect(answerForAgent(answered(input, { decision: 'approve' }))).toContain(
      'The human chose not to answer',
    );
    expect(answerForAgent(answered(input, { decision: 'reject' }))).toBeNull();
    expect(answerForAgent(answered(spec, { decision: 'approve' }))).toBeNull();
  });
});

describe('a GitHub comment that answers a gate', () => {
  it.each([
    ['/relais approve', { decision: 'approve', reason: null, text: null }],
    ['  /RELAIS Approve  ', { decision: 'approve', reason: null, text: null }],
    [
      '/relais reject Cover the empty name.',
      { decision: 'reject', reason: 'Cover the empty name.', text: null },
    ],
    ['/relais reject', { decision: 'reject', reason: null, text: null }],
    [
      '/relais answer Use UTC\nand ISO dates.',
      { decision: 'answer', reason: null, text: 'Use UTC\nand ISO dates.' },
    ],
  ])('%j', (body, command) => {
    expect(parseGateComment(body)).toEqual(command);
  });

  it.each([
    'Looks good.\n/relais approve',
    '/relais answer',
    '/relais approved',
    '/relaisapprove',
    'relais approve',
    '> /relais approve',
  ])('is not a command: %j', (body) => {
    expect(parseGateComment(body)).toBeNull();
  });
});
