import { afterEach, describe, expect, it } from 'vitest';
import { relaisScript, roleOf, userText } from '../../source/demo/relais-script.js';
import { type ScriptedModel, startScriptedModel } from '../../source/demo/scripted-model-server.js';
import { plannerProject } from '../support/planner.js';
import { CLAUDE, claudeEnv, plannerModelPlan, Q1, Q3, SUMMARY } from '../support/planner-model.js';
import { CLI, type TestProject } from '../support/project.js';
import { TmuxSession } from '../support/tmux.js';

// Seed 004 on a real terminal (tmux): the REAL claude binary plans against a scripted model
// served from this test process; the human types the answers. Once in the full-screen app of
// `ralphy start`, once in the plain front end of `relais plan` (TERM=dumb: a prompt per answer).

let tmux: TmuxSession | null = null;
let model: ScriptedModel | null = null;
let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(async () => {
  tmux?.kill();
  tmux = null;
  await model?.close();
  model = null;
  project?.dispose();
  project = null;
});

async function setup(name: string) {
  expect(TmuxSession.available(), 'tmux is required (apt-get install tmux)').toBe(true);
  const p = plannerProject((config) => {
    config.claude_code_cli.command = CLAUDE;
  });
  project = p;
  model = await startScriptedModel(relaisScript(plannerModelPlan(p.root)));
  tmux = new TmuxSession(name, 120, 44);
  return {
    p,
    model,
    tmux,
    env: { ...p.env, ...claudeEnv(model.url), CI: undefined, CONTINUOUS_INTEGRATION: undefined },
  };
}

/** Types into the app's answer box and waits until the screen shows it. */
async function typeInApp(session: TmuxSession, text: string): Promise<void> {
  session.keys('-l', text);
  await session.waitFor((s) => s.includes(`${text}▌`), `"${text}" typed`);
}

function specPrompt(m: ScriptedModel): string {
  return userText(m.requests.find((r) => roleOf(r) === 'spec') as never);
}

describe('the planner on a real terminal (tmux)', () => {
  it('ralphy start, full screen: two rounds typed, Ctrl-P proceeds, the spec-agent gets the handoff', async () => {
    const { p, model, tmux, env } = await setup('plan-app');
    tmux.start(`cd ${p.root} && node ${CLI} start; echo "START_EXIT=$?"; read -r _`, {
      ...env,
      TERM: 'xterm-256color',
    });

    const round1 = await tmux.waitFor((s) => s.includes('Planner, round 1: 2 open questions'), 'round 1');
    expect(tmux.alternateScreen()).toBe(true);
    expect(round1).toContain('1. Should greet() take the full name or only the first name?');
    expect(round1).toMatch(/Ctrl-P\s+proceed/);
    // Each key lands before the next is sent (awaited on screen): text and Enter arriving in one
    // read would be a paste, whose line breaks belong to the answer.
    await typeInApp(tmux, '1: only the first name');
    tmux.keys('C-j');
    await typeInApp(tmux, '2: English only');
    tmux.keys('Enter');

    const round2 = await tmux.waitFor((s) => s.includes('Planner, round 2: 1 open question'), 'round 2');
    expect(round2).toContain('For the assignee (how the code should do it):');
    await typeInApp(tmux, 'its own module, src/b.ts');
    tmux.keys('Enter');

    await tmux.waitFor((s) => s.includes('enough to draft the spec. Proceed?'), 'the proceed gate');
    tmux.keys('C-p');
    const atSpec = await tmux.waitFor(
      (s) => s.includes('Approve the specification and tasks?'),
      'the spec gate',
    );
    expect(atSpec).toContain('plan: answered: proceed');
    // n asks why (optional); Enter rejects without a reason.
    tmux.keys('n');
    await tmux.waitFor((s) => s.includes('Why do you reject?'), 'the reason prompt');
    tmux.keys('Enter');
    await tmux.waitFor((s) => s.includes('q  quit') && s.includes('REJECTED'), 'the end');
    tmux.keys('q');
    const after = await tmux.waitFor((s) => s.includes('START_EXIT='), 'the end of ralphy start');
    expect(after).toContain('START_EXIT=1');
    expect(tmux.alternateScreen()).toBe(false);

    const spec = specPrompt(model);
    expect(spec).toContain(`Summary: ${SUMMARY}`);
    expect(spec).toContain(`- [gap 1] ${Q1}\n  answered: "only the first name"`);
    expect(spec).toContain(`- [gap 3] ${Q3}\n  answered: "its own module, src/b.ts"`);
  }, 180_000);

  it('relais plan, plain front end on a TTY: answers line by line (an empty line sends), proceed typed', async () => {
    const { p, model, tmux, env } = await setup('plan-plain');
    tmux.start(`cd ${p.root} && node ${CLI} plan; echo "PLAN_EXIT=$?"; read -r _`, { ...env, TERM: 'dumb' });

    await tmux.waitFor((s) => s.includes('Your answer ("1: …" per question'), 'the first question');
    expect(tmux.alternateScreen()).toBe(false);
    expect(tmux.screen()).toContain('=== Planner, round 1: 2 open questions ===');
    tmux.keys('-l', '1: only the first name');
    tmux.keys('Enter');
    tmux.keys('-l', '2: English only');
    tmux.keys('Enter', 'Enter');

    await tmux.waitFor((s) => s.includes('=== Planner, round 2: 1 open question ==='), 'round 2');
    await tmux.waitFor((s) => s.split('Your answer').length - 1 >= 2, 'the second prompt');
    tmux.keys('-l', 'its own module, src/b.ts');
    tmux.keys('Enter', 'Enter');

    await tmux.waitFor(
      (s) => s.includes('=== Planner: enough to draft the spec. Proceed? ==='),
      'the proceed gate',
    );
    await tmux.waitFor((s) => s.split('Your answer').length - 1 >= 3, 'the third prompt');
    tmux.keys('-l', 'proceed');
    tmux.keys('Enter', 'Enter');

    const done = await tmux.waitFor((s) => s.includes('PLAN_EXIT='), 'the end of relais plan');
    expect(done).toContain('PLAN_EXIT=0');
    expect(done).toContain('Planning is done');
    expect(model.requests.some((r) => roleOf(r) === 'spec')).toBe(false);
    const session = p.json(
      `relais/planner/sessions/${p.json('relais/planner/learnings.json').learnings[0].session_id}.json`,
    );
    expect(session).toMatchObject({ status: 'ready', rounds: 2 });
    expect(session.gaps.map((g: any) => g.closed_note)).toEqual([
      'only the first name',
      'English only',
      'its own module, src/b.ts',
    ]);
  }, 180_000);
});
