import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { GateAnswer, GateRequest } from '../../source/engine/gates.js';
import { approveAll } from '../../source/engine/gates.js';
import {
  answer,
  ask,
  close,
  comment,
  learn,
  plannerProject,
  proceedGate,
  ready,
} from '../support/planner.js';
import type { TestProject } from '../support/project.js';
import {
  happyScenario,
  NO,
  runInProcess,
  scriptedGates,
  specStep,
  workflowFile,
  YES,
} from '../support/workflow.js';

// Seed 004 as `ralphy start`'s PLANNING phase: the planner is the scripted fake agent (a real
// child process per call); the human is a scripted gate port. Everything the runner keeps is read
// back from relais/planner/.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

const Q1 = 'Should the greeting use the full name or only the first name?';
const Q2 = 'Is it always "Hello", or should it follow the user\'s language?';
const Q3 = 'Should bye() live in its own module, or next to greet()?';

/** Answers the plan gates in order; every answer is recorded with the lines the human saw. */
function humanAt(answers: Array<GateAnswer | string>) {
  const seen: GateRequest[] = [];
  const gates = scriptedGates({
    plan: (request) => {
      seen.push(request);
      const next = answers.shift();
      if (next === undefined) return { decision: 'reject', by: 'nobody' };
      return typeof next === 'string' ? { decision: 'answer', by: 'human', text: next } : next;
    },
    spec: NO,
  });
  return { gates, seen };
}

/** The one planning session of the project (relais/planner/sessions/prd-<hash>.json). */
function session(p: TestProject): any {
  const [name] = readdirSync(join(p.root, 'relais/planner/sessions'));
  return p.json(`relais/planner/sessions/${name}`);
}

describe('PLANNING in ralphy start (seed 004)', () => {
  it('two rounds of questions answered by gap id and in free text, proceed, and the spec-agent gets the handoff', async () => {
    project = plannerProject();
    project.scenario({
      planner: [
        answer(
          ask('reporter', [
            { q: Q1, why: 'It decides what greet() takes.', severity: 'blocking' },
            { q: Q2, why: 'A language rule changes the API.' },
          ]),
        ),
        answer(
          close(1, 'answered', 'only the first name'),
          close(2, 'answered', 'English only, always Hello'),
          learn('domain_learnings', 'Greetings are English-only.', 2),
          ask('assignee', [{ q: Q3, why: 'It decides the files the tasks touch.' }]),
        ),
        answer(close(3, 'answered', 'its own module, src/b.ts'), proceedGate()),
        answer(ready('Greet by first name in English; bye() in src/b.ts.', [1, 2, 3], [1])),
      ],
      spec: [specStep()],
    });
    const human = humanAt([
      '1: only the first name\n2: English only, always Hello',
      'its own module, src/b.ts',
      'proceed',
    ]);
    const run = await runInProcess(project, { gates: human.gates });

    expect(run.states).toEqual(['PLANNING', 'SPECIFICATION', 'AWAITING_SPEC_VALIDATION', 'REJECTED']);
    // Round 1: numbered by gap id, batched by respondent, one line of why it matters.
    expect(human.seen[0]?.title).toBe('Planner, round 1: 2 open questions');
    expect(human.seen[0]?.answer).toBe('text');
    expect(human.seen[0]?.lines).toEqual(
      expect.arrayContaining([
        'Relay: A few quick questions:',
        'For the reporter (what the product must do):',
        `  1. ${Q1} (blocking)`,
        '     why: It decides what greet() takes.',
        `  2. ${Q2}`,
      ]),
    );
    // Round 2: the reporter's questions are closed; the assignee's batch is shown apart.
    expect(human.seen[1]?.title).toBe('Planner, round 2: 1 open question');
    expect(human.seen[1]?.lines).toContain('For the assignee (how the code should do it):');
    expect(human.seen[1]?.lines.join('\n')).not.toContain(Q1);
    // The proceed gate: a separate, short question.
    expect(human.seen[2]?.title).toBe('Planner: enough to draft the spec. Proceed?');
    expect(human.seen[2]?.lines[0]).toContain('Relay: I think we have enough');

    // The planner is stateless: each call got the whole context, rebuilt from the session.
    const calls = project.calls().filter((c) => c.role === 'planner');
    expect(calls).toHaveLength(4);
    expect(calls[1]?.prompt).toContain('→ answers gap 1: only the first name');
    expect(calls[3]?.prompt).toContain('is an explicit proceed ("proceed")');
    expect(calls[0]?.argv).toEqual(expect.arrayContaining(['--system-prompt', '--tools', 'Read,Glob,Grep']));

    // The handoff reaches the spec-agent's prompt.
    const spec = project.calls().find((c) => c.role === 'spec');
    expect(spec?.prompt).toContain('=== PLANNING');
    expect(spec?.prompt).toContain('Summary: Greet by first name in English; bye() in src/b.ts.');
    expect(spec?.prompt).toContain(`- [gap 1] ${Q1}\n  answered: "only the first name"`);
    expect(spec?.prompt).toContain('- (domain) Greetings are English-only.');

    const s = session(project);
    expect(s).toMatchObject({ status: 'ready', rounds: 2, planner_runs: 4, spec_first_gate: 'rejected' });
    expect(s.gaps.map((g: any) => [g.id, g.respondent, g.closed_reason])).toEqual([
      [1, 'reporter', 'answered'],
      [2, 'reporter', 'answered'],
      [3, 'assignee', 'answered'],
    ]);
    expect(project.json('relais/planner/learnings.json').learnings).toMatchObject([
      { id: 1, type: 'domain_learnings', content: 'Greetings are English-only.', source_author: 'terminal' },
    ]);
    expect(project.read('relais/FACTS.md')).toContain(
      '- Greetings are English-only. (learning 1, from terminal)',
    );
    expect(workflowFile(project).gate_decisions.map((g: any) => [g.gate, g.decision])).toEqual([
      ['plan', 'answer'],
      ['plan', 'answer'],
      ['plan', 'answer'],
      ['spec', 'reject'],
    ]);
    // Nothing of the planner's is in the tree: relais/ is the runner's.
    expect(project.status()).toBe('');
  });

  it("the planner's learnings reach the orchestrator of the implementation through FACTS.md", async () => {
    project = plannerProject();
    project.scenario({
      ...happyScenario(),
      planner: [
        answer(ask('reporter', [{ q: Q2 }])),
        answer(
          close(1, 'answered', 'English only, always Hello'),
          learn('domain_learnings', 'Greetings are English-only.', 2),
          ready('Greet in English.', [1], []),
        ),
      ],
    });
    const run = await runInProcess(project, {
      gates: scriptedGates({
        plan: { decision: 'answer', by: 'human', text: 'English only, always Hello. Go ahead.' },
        spec: YES,
        qa: NO,
      }),
    });
    expect(run.outcome.reason).toBe('rejected_at_qa');
    const orchestrator = project.calls().find((c) => c.role === 'orchestrator');
    expect(orchestrator?.prompt).toContain('- Greetings are English-only. (learning 1, from terminal)');
  });

  it('--yes: nobody answers the questions, so the runner proceeds; the open gaps are closed as inferred and the assumptions shown', async () => {
    project = plannerProject();
    project.scenario({
      planner: [
        answer(ask('reporter', [{ q: Q1, why: 'It decides what greet() takes.' }])),
        answer(
          close(
            1,
            'inferred',
            'Assumption: greet() takes the first name.\nRationale: the PRD says "by name", and first names read politely.',
          ),
          comment('Proceeding on your go-ahead. Assumption: greet() takes the first name.', 'assumptions'),
          ready('Greet by first name.', [1]),
        ),
      ],
      spec: [specStep()],
    });
    const run = await runInProcess(project, {
      gates: {
        ask: (request, signal) =>
          request.gate === 'spec' ? Promise.resolve(NO) : approveAll.ask(request, signal),
      },
    });
    expect(run.states).toEqual(['PLANNING', 'SPECIFICATION', 'AWAITING_SPEC_VALIDATION', 'REJECTED']);
    const resolved = run.events.flatMap((e) =>
      e.type === 'gate.resolved' && e.gate === 'plan' ? [[e.decision, e.by]] : [],
    );
    expect(resolved).toEqual([
      ['reject', 'nobody'],
      ['approve', 'auto'],
    ]);
    const readyEvent = run.events.find((e) => e.type === 'planner.ready');
    expect(readyEvent).toMatchObject({
      assumptions: [
        {
          gap_id: 1,
          question: Q1,
          note: expect.stringContaining('Assumption: greet() takes the first name.'),
        },
      ],
    });
    const calls = project.calls().filter((c) => c.role === 'planner');
    expect(calls[1]?.prompt).toContain('human @--yes (reporter) · proceed');
    expect(project.calls().find((c) => c.role === 'spec')?.prompt).toContain(
      `- [gap 1] ${Q1}\n  assumed (not answered): Assumption: greet() takes the first name.`,
    );
  });

  it('no terminal and no --yes: nobody can answer, the workflow stops FAILED (needs_input) and says how to go on', async () => {
    project = plannerProject();
    project.scenario({ planner: [answer(ask('reporter', [{ q: Q1 }]))] });
    const run = await runInProcess(project, { gates: scriptedGates({}) });
    expect(run.states).toEqual(['PLANNING', 'FAILED']);
    expect(run.outcome.reason).toBe('needs_input');
    expect(run.outcome.detail).toContain('nobody can answer them (no terminal)');
    expect(run.outcome.detail).toContain('--yes');
  });

  it('Esc at the questions, then n: stopped without losing anything; the resume asks the same questions without a new planner call', async () => {
    project = plannerProject();
    project.scenario({
      planner: [
        answer(ask('reporter', [{ q: Q1 }])),
        answer(close(1, 'answered', 'first name'), proceedGate()),
      ],
    });
    const first = humanAt([
      { decision: 'reject', by: 'human' },
      { decision: 'reject', by: 'human' },
    ]);
    const run = await runInProcess(project, { gates: first.gates });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'needs_input' });
    expect(run.outcome.detail).toContain('you declined to answer the planner and to proceed');
    expect(first.seen[1]).toMatchObject({
      title: 'Proceed to the specification without answering?',
      answer: 'yes_no',
    });

    const again = humanAt(['first name']);
    const resumed = await runInProcess(project, {
      gates: {
        ask: (r, s) =>
          r.gate === 'resume' ? Promise.resolve({ decision: 'approve', by: 'human' }) : again.gates.ask(r, s),
      },
    });
    expect(resumed.states[0]).toBe('PLANNING');
    expect(again.seen[0]?.lines).toContain(`  1. ${Q1}`);
    // One planner call before, one after the new answer: the resume itself asked nothing new.
    expect(project.calls().filter((c) => c.role === 'planner')).toHaveLength(2);
  });

  it('an answer that breaks a rule is sent back once with the reasons; fixed, it is executed', async () => {
    project = plannerProject();
    project.scenario({
      planner: [
        // Two questions asked, one gap: refused, nothing executed.
        answer(comment(`1) ${Q1}\n2) ${Q2}`, 'questions'), {
          type: 'update_gaps',
          data: { add: [{ question: Q1, respondent: 'reporter', severity: 'high' }] },
        }),
        answer(ask('reporter', [{ q: Q1 }, { q: Q2 }])),
      ],
    });
    const run = await runInProcess(project, { gates: scriptedGates({}) });
    const retry = project.calls().filter((c) => c.role === 'planner')[1]?.prompt ?? '';
    expect(retry).toContain('=== RETRY ===');
    expect(retry).toContain('the comments ask 2 explicit question(s) but update_gaps.add has 1 new gap(s)');
    expect(session(project)).toMatchObject({ repairs: 1, rounds: 1 });
    expect(session(project).gaps).toHaveLength(2);
    expect(run.outcome.reason).toBe('needs_input');
  });

  it("twice invalid: a clear stop with the validator's message, and nothing of it executed", async () => {
    project = plannerProject();
    const bad = answer(close(7, 'answered', 'yes'));
    project.scenario({ planner: [bad, bad] });
    const run = await runInProcess(project, { gates: scriptedGates({}) });
    expect(run.states).toEqual(['PLANNING', 'FAILED']);
    expect(run.outcome.reason).toBe('planning_failed');
    expect(run.outcome.detail).toContain('gap 7 does not exist (gaps: none)');
    expect(session(project)).toMatchObject({ repairs: 1, planner_runs: 0, gaps: [], discussion: [] });
  });

  it('a missing login fails planning at the first claude start, with the login fix (defect 26)', async () => {
    project = plannerProject();
    const notLoggedIn = { is_error: true, result: 'Not logged in · Please run /login', exit_code: 1 };
    project.scenario({ planner: [notLoggedIn, notLoggedIn, notLoggedIn] });
    const run = await runInProcess(project, { gates: scriptedGates({}) });
    expect(run.states).toEqual(['PLANNING', 'FAILED']);
    expect(run.outcome.detail).toContain('not retried: Run `claude` once and log in (/login)');
    expect((project.calls() ?? []).filter((c) => c.role === 'planner')).toHaveLength(1);
  });

  it('silence does nothing: while the question waits, the planner is not called again', async () => {
    project = plannerProject();
    project.scenario({ planner: [answer(ask('reporter', [{ q: Q1 }]))] });
    const controller = new AbortController();
    let asked: () => void = () => undefined;
    const waiting = new Promise<void>((resolve) => {
      asked = resolve;
    });
    const gates = {
      ask: (_request: GateRequest, signal: AbortSignal) =>
        new Promise<GateAnswer>((resolve) => {
          asked();
          signal.addEventListener('abort', () => resolve({ decision: 'reject', by: 'nobody' }), {
            once: true,
          });
        }),
    };
    const running = runInProcess(project, { gates, signal: controller.signal });
    await waiting;
    expect(project.calls().filter((c) => c.role === 'planner')).toHaveLength(1);
    expect(workflowFile(project)).toMatchObject({ state: 'PLANNING', status: 'waiting' });
    controller.abort();
    const run = await running;
    expect(run.outcome.status).toBe('interrupted');
    expect(project.calls()).toHaveLength(1);
  });
});
