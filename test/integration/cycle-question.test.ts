import { afterEach, describe, expect, it } from 'vitest';
import { resumeCycle } from '../../source/engine/cycle/status.js';
import type { GateRequest } from '../../source/engine/gates.js';
import { CycleRepo, plan, scripted, spec, track, verdict, writes } from '../support/cycle-project.js';

// Issue 15 in the cycle: an implementer that asks a question instead of implementing made no
// attempt. Nothing of it is committed, the question goes to the gate, and the answer goes into the
// next attempt's prompt; with nobody to answer, the cycle pauses until --resume --answer.

let repo: CycleRepo;
afterEach(() => repo?.dispose());

const QUESTION = 'Should greet() say "Hello" or "Good day"? Please confirm before I change it.';
const asks = (_r: unknown, cwd: string) => {
  // It started on something, then asked: the leftovers must not be committed.
  writes({ 'src/greet.js': "module.exports = () => 'half-done';\n" })(_r as never, cwd);
  return QUESTION;
};
const implements_ = writes({
  'src/greet.js': "module.exports = (name) => 'Hello, ' + name;\n// asked first\n",
});

async function plannedRepo(): Promise<void> {
  repo = await CycleRepo.create();
}

describe("the cycle's implementer asks a question", () => {
  it('answered at the gate: no attempt counted, nothing committed, the answer in the next prompt', async () => {
    await plannedRepo();
    const asked: GateRequest[] = [];
    repo.gates = {
      ask: async (request) => {
        asked.push(request);
        return request.gate === 'input'
          ? { decision: 'answer', by: 'human', text: 'Hello, always.' }
          : { decision: 'approve', by: 'auto' };
      },
    };
    const { runners, calls } = scripted({
      planner: [track(), spec(), plan([{ id: 'T1' }])],
      implementer: [asks, implements_],
      verifier: verdict('YES'),
    });
    await repo.cycles(runners, (o) => o.action === 'implement_task', 8);
    const head = repo.head();
    expect(asked.find((g) => g.gate === 'input')).toMatchObject({
      title: 'The implementer asks about T1',
      lines: [QUESTION],
      answer: 'text',
    });
    expect(repo.state().task).toMatchObject({ sub_step: 'implement', retry_count: 0 });
    expect(repo.status()).toBe('');
    expect(repo.git('stash', 'list')).toContain('T1 asked a question');
    await repo.cycles(runners, (o) => o.action === 'implement_task', 2);
    const second = calls.filter((c) => c.role === 'implementer')[1];
    expect(second?.request.userPrompt).toContain('## ANSWERS FROM THE HUMAN');
    expect(second?.request.userPrompt).toContain(
      `You asked: ${QUESTION}\nThe human answered: Hello, always.`,
    );
    expect(repo.head()).not.toBe(head);
    expect(repo.read('src/greet.js')).toContain('asked first');
  });

  it('nobody to answer: the cycle pauses CYCLE_NEEDS_INPUT; resuming with the answer (relais cycle --resume --answer) hands it on', async () => {
    await plannedRepo();
    // The default harness gates approve yes/no gates only: a question finds nobody.
    const { runners, calls } = scripted({
      planner: [track(), spec(), plan([{ id: 'T1' }])],
      implementer: [asks, implements_],
      verifier: verdict('YES'),
    });
    const outcomes = await repo.cycles(runners, (o) => o.action === 'implement_task', 8);
    expect(outcomes.at(-1)).toMatchObject({
      reply: 'CYCLE_FAIL',
      code: 'CYCLE_NEEDS_INPUT',
      phase: 'needs_human',
    });
    expect(repo.state().task.retry_count).toBe(0);
    expect(repo.status()).toBe('');
    // An answer for another pause is refused; this one is taken.
    const wrong = await resumeCycle(repo.root, repo.config.workspace_dir, {
      verdict: { answer: 'YES', reason: 'x' },
    });
    expect(wrong.ok).toBe(false);
    const resumed = await resumeCycle(repo.root, repo.config.workspace_dir, { answer: 'Hello, always.' });
    expect(resumed).toMatchObject({ ok: true, phase: 'execute' });
    await repo.cycles(runners, (o) => o.action === 'implement_task', 2);
    const second = calls.filter((c) => c.role === 'implementer')[1];
    expect(second?.request.userPrompt).toContain(`the implementer asked: ${QUESTION}`);
    expect(second?.request.userPrompt).toContain('The human answered: Hello, always.');
  });
});
