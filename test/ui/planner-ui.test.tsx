import { describe, expect, test, vi } from 'vitest';

vi.hoisted(() => {
  delete process.env.CI;
});

import type { GateRequest } from '../../source/engine/gates.js';
import { keyAction } from '../../source/ui/keys/key-map.js';
import { footerKeys } from '../../source/ui/panels/Footer.js';
import { outputLinesOf } from '../../source/ui/store/output-lines.js';
import { initialUiState, type UiState } from '../../source/ui/store/ui-state.js';
import { enter, KEY, NO_KEY, renderApp, Script, T0 } from './helpers.js';

// Seed 004 in the app: the PLANNING row of the timeline, the plan gate's keys (Ctrl-P proceeds),
// and what the planner's events add to the output.

const CTRL_P = '\u0010';

const planGate: GateRequest = {
  gate: 'plan',
  title: 'Planner, round 1: 1 open question',
  lines: [
    'For the reporter (what the product must do):',
    '  1. Full name or first name?',
    '     why: the API.',
  ],
  answer: 'text',
};

function withGate(gate: UiState['gate'], draft = ''): UiState {
  const base = initialUiState('workflow', 'demo', T0);
  return { ...base, gate, interaction: { ...base.interaction, draft } };
}

describe('the plan gate', () => {
  test('Ctrl-P answers "proceed" at the planner\'s questions, whatever was typed; elsewhere it does nothing', () => {
    const ctrlP = { ...NO_KEY, ctrl: true };
    expect(keyAction(withGate(planGate, 'half an answer'), 'p', ctrlP)).toEqual({
      type: 'answer',
      text: 'proceed',
    });
    expect(keyAction(withGate({ ...planGate, gate: 'input' }), 'p', ctrlP)).toEqual({ type: 'none' });
    expect(keyAction(withGate({ ...planGate, answer: 'yes_no' }), 'p', ctrlP)).toEqual({ type: 'none' });
  });

  test("the footer offers Ctrl-P at the planner's questions only", () => {
    expect(footerKeys(withGate(planGate))).toContainEqual(['Ctrl-P', 'proceed']);
    expect(footerKeys(withGate({ ...planGate, gate: 'input' }))).not.toContainEqual(['Ctrl-P', 'proceed']);
  });

  test('in the app: the questions show with their why, a typed multi-line answer is sent, Ctrl-P proceeds', async () => {
    const s = new Script();
    const app = renderApp(s.store);
    const signal = new AbortController().signal;
    const first = app.controller.gates.ask(planGate, signal);
    await app.waitFor('Planner, round 1: 1 open question');
    expect(app.frame()).toContain('1. Full name or first name?');
    expect(app.frame()).toContain('why: the API.');
    expect(app.frame()).toContain('Ctrl-P proceed');
    app.press('1: first name');
    app.press(KEY.ctrlJ);
    app.press('(never the surname)');
    await app.waitFor('(never the surname)▌');
    app.press(KEY.enter);
    await expect(first).resolves.toEqual({
      decision: 'answer',
      by: 'human',
      text: '1: first name\n(never the surname)',
    });

    const second = app.controller.gates.ask(
      { ...planGate, title: 'Planner: enough to draft the spec. Proceed?' },
      signal,
    );
    await app.waitFor('Proceed?');
    app.press(CTRL_P);
    await expect(second).resolves.toEqual({ decision: 'answer', by: 'human', text: 'proceed' });
    app.unmount();
  });

  test('a long question wraps under its number instead of being cut', async () => {
    const s = new Script();
    const app = renderApp(s.store, { columns: 100, rows: 40 });
    const long = `  1. ${'Should the slug keep every letter of every script as it is, '.repeat(2)}or not?`;
    void app.controller.gates.ask({ ...planGate, lines: [long] }, new AbortController().signal);
    await app.waitFor('or not?');
    app.controller.gates.cancelAll();
    app.unmount();
  });
});

describe('the timeline and the output', () => {
  test('PLANNING joins the timeline when the workflow enters it, before SPECIFICATION', () => {
    const s = new Script();
    expect(s.state.phases.map((p) => p.state)[0]).toBe('SPECIFICATION');
    s.emit(enter('PLANNING'), 5_000).emit(enter('PLANNING', 'waiting'), 60_000).emit(enter('SPECIFICATION'));
    expect(s.state.phases.slice(0, 2).map((p) => [p.state, p.status])).toEqual([
      ['PLANNING', 'done'],
      ['SPECIFICATION', 'running'],
    ]);
    expect(s.state.phases[0]?.endedAtMs).toBe(T0 + 65_000);
  });

  test('a workflow that skips planning shows no PLANNING row', () => {
    const s = new Script().emit(enter('SPECIFICATION'));
    expect(s.state.phases.some((p) => p.state === 'PLANNING')).toBe(false);
  });

  test("the planner's answer and readiness in the output, assumptions flagged", () => {
    const stamp = { at: new Date(T0).toISOString() };
    const actions = outputLinesOf({
      type: 'planner.actions',
      session_id: 's',
      round: 1,
      comments: [],
      gaps_added: [],
      gaps_closed: [{ id: 2, reason: 'answered', note: 'monthly' }],
      learnings_added: [{ id: 1, type: 'domain_learnings', content: 'acme uses CMP-08.' }],
      open_gaps: 1,
      ...stamp,
    });
    expect(actions.map((l) => l.text)).toEqual([
      'planner: 0 question(s) asked, 1 gap(s) closed, 1 open',
      '  gap 2 answered: monthly',
      '  learning 1: acme uses CMP-08.',
    ]);
    const ready = outputLinesOf({
      type: 'planner.ready',
      session_id: 's',
      context_summary: 'Monthly revenue.',
      closed_gap_ids: [1, 2],
      learning_ids: [],
      assumptions: [{ gap_id: 1, question: 'Q?', note: 'Assumption: x. Rationale: y.' }],
      ...stamp,
    });
    expect(ready.map((l) => [l.kind, l.text])).toEqual([
      ['agent', 'planner: ready for the spec · Monthly revenue.'],
      ['warn', '  assumption (gap 1): Assumption: x. Rationale: y.'],
    ]);
  });
});

describe("a pasted answer ending with a new line (the newcomer's pass, defect 30)", () => {
  test('is not sent, the footer says why, and Enter sends it without the trailing line break', async () => {
    const s = new Script();
    const app = renderApp(s.store, { columns: 120, rows: 30 });
    const answered = app.controller.gates.ask(planGate, new AbortController().signal);
    await app.waitFor('Planner, round 1: 1 open question');
    // One chunk, as a paste or tmux send-keys 'proceed' Enter delivers it.
    app.press('proceed\r');
    await app.waitFor('Pasted text keeps its line breaks', 'the hint under the panels');
    expect(app.frame()).toContain('› proceed');
    app.press(KEY.enter);
    await expect(answered).resolves.toEqual({ decision: 'answer', by: 'human', text: 'proceed' });
    app.unmount();
  });

  test('a single typed key never gets the hint', () => {
    const state = withGate(planGate, 'yes');
    expect(keyAction(state, 'x', NO_KEY)).toEqual({ type: 'draft', draft: 'yesx' });
  });
});
