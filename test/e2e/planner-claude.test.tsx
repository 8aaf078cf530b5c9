import { afterEach, describe, expect, test, vi } from 'vitest';

vi.hoisted(() => {
  delete process.env.CI;
});

import { relaisScript, roleOf, userText } from '../../source/demo/relais-script.js';
import { type ScriptedModel, startScriptedModel } from '../../source/demo/scripted-model-server.js';
import { createUiStore } from '../../source/ui/store/create-store.js';
import { plannerProject } from '../support/planner.js';
import { CLAUDE, claudeEnv, plannerModelPlan, Q1, Q3, SUMMARY } from '../support/planner-model.js';
import type { TestProject } from '../support/project.js';
import { runInProcess } from '../support/workflow.js';
import { KEY, renderApp } from '../ui/helpers.js';

// Seed 004 end to end: `ralphy start`'s PLANNING through the REAL claude binary (only the model
// behind it is scripted, on 127.0.0.1), answered with keys in the full-screen app
// (ink-testing-library), then the spec-agent, which must receive the planner's handoff.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
let model: ScriptedModel | null = null;
afterEach(async () => {
  await model?.close();
  model = null;
  project?.dispose();
  project = null;
});

const CTRL_P = '\u0010';

/** Each of these waits covers a real claude process: seconds on a loaded 2-core machine. */
const AGENT_WAIT_MS = 60_000;

describe('e2e: the planner with the real claude binary, answered in the app', () => {
  test('two rounds typed in the app, Ctrl-P to proceed, the spec-agent receives the handoff', async () => {
    const p = plannerProject((config) => {
      config.claude_code_cli.command = CLAUDE;
    });
    project = p;
    model = await startScriptedModel(relaisScript(plannerModelPlan(p.root)));
    const store = createUiStore({ view: 'workflow', project: 'greeting' });
    const app = renderApp(store, { rows: 44 });
    const running = runInProcess(p, {
      gates: app.controller.gates,
      env: claudeEnv(model.url),
      onEvent: (event) => store.dispatch(event),
    });

    await app.waitFor('Planner, round 1: 2 open questions', undefined, AGENT_WAIT_MS);
    // Numbered by gap id, batched per respondent, with why it matters (long lines wrap).
    expect(app.frame()).toContain('For the reporter (what the product must do):');
    expect(app.frame()).toContain('1. Should greet() take the full name or only the');
    expect(app.frame()).toContain('why: It decides what greet() takes.');
    expect(app.frame()).toMatch(/Ctrl-P\s+proceed/);
    app.press('1: only the first name');
    app.press(KEY.ctrlJ);
    app.press('2: English only');
    await app.waitFor('2: English only▌');
    app.press(KEY.enter);

    await app.waitFor('Planner, round 2: 1 open question', undefined, AGENT_WAIT_MS);
    expect(app.frame()).toContain('For the assignee (how the code should do it):');
    expect(app.frame()).toContain('3. Should bye() live in its own module, or next to');
    app.press('its own module, src/b.ts');
    await app.waitFor('src/b.ts▌');
    app.press(KEY.enter);

    await app.waitFor('enough to draft the spec. Proceed?', undefined, AGENT_WAIT_MS);
    app.press(CTRL_P);
    await app.waitFor('Approve the specification and tasks?', undefined, AGENT_WAIT_MS);
    expect(app.frame()).toContain('plan: answered: proceed');
    // `n` asks why; Enter rejects without a reason.
    app.press('n');
    await app.waitFor('Why do you reject?');
    app.press(KEY.enter);
    const run = await running;
    app.unmount();

    expect(run.outcome.state, JSON.stringify(run.outcome)).toBe('REJECTED');
    expect(run.states).toEqual(['PLANNING', 'SPECIFICATION', 'AWAITING_SPEC_VALIDATION', 'REJECTED']);
    // The real Read tool ran for the planner, and its result went back to the model.
    expect(run.events.find((e) => e.type === 'agent.tool' && e.role === 'planner')).toMatchObject({
      tool: 'Read',
    });
    const planner = model.requests.filter((r) => roleOf(r) === 'planner');
    expect(JSON.stringify(planner[1]?.messages)).toContain('tool_result');
    // The answers reached the planner as the human typed them…
    expect(planner.map(userText).join('\n')).toContain('→ answers gap 1: only the first name');
    // …and the handoff reached the spec-agent.
    const spec = userText(model.requests.find((r) => roleOf(r) === 'spec') as never);
    expect(spec).toContain(`Summary: ${SUMMARY}`);
    expect(spec).toContain(`- [gap 1] ${Q1}\n  answered: "only the first name"`);
    expect(spec).toContain('- [gap 3] ' + Q3 + '\n  answered: "its own module, src/b.ts"');
    expect(spec).toContain('- (domain) Greetings are in English only.');
  }, 300_000); // four real claude runs, each waited for up to AGENT_WAIT_MS
});
