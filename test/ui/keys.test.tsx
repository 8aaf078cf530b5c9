import { describe, expect, test, vi } from 'vitest';

vi.hoisted(() => {
  delete process.env.CI;
});

import type { GateRequest } from '../../source/engine/gates.js';
import { keyAction } from '../../source/ui/keys/key-map.js';
import { initialUiState, type UiState } from '../../source/ui/store/ui-state.js';
import { KEY, NO_KEY, renderApp, Script, settle, T0 } from './helpers.js';

const specGate: GateRequest = {
  gate: 'spec',
  title: 'Approve the specification?',
  lines: ['2 tasks', '1. Parse', '2. Render'],
  answer: 'yes_no',
};
const inputGate: GateRequest = {
  gate: 'input',
  title: 'dev-agent needs input',
  lines: ['Which DB?'],
  answer: 'text',
};

function withState(patch: Partial<UiState>, interaction: Partial<UiState['interaction']> = {}): UiState {
  const base = initialUiState('workflow', 'demo', T0);
  return { ...base, ...patch, interaction: { ...base.interaction, ...interaction } };
}

describe('key map (pure)', () => {
  const yesNo = { gate: { gate: 'spec', title: 't', lines: [], answer: 'yes_no' } } as const;
  const text = { gate: { gate: 'input', title: 't', lines: [], answer: 'text' } } as const;

  test('y/n answer a yes/no gate, and mean nothing without one', () => {
    expect(keyAction(withState(yesNo), 'y', NO_KEY)).toEqual({ type: 'gate', decision: 'approve' });
    // n asks why first (issue 16 item 5); the reject is sent from there.
    expect(keyAction(withState(yesNo), 'n', NO_KEY)).toEqual({ type: 'reject_ask' });
    expect(keyAction(withState({}), 'y', NO_KEY)).toEqual({ type: 'none' });
  });

  test('a asks first; then y or a confirms, anything else cancels', () => {
    expect(keyAction(withState({}), 'a', NO_KEY)).toEqual({ type: 'abort_ask' });
    const asking = withState(yesNo, { confirmingAbort: true });
    expect(keyAction(asking, 'y', NO_KEY)).toEqual({ type: 'abort_confirm' });
    expect(keyAction(asking, 'a', NO_KEY)).toEqual({ type: 'abort_confirm' });
    expect(keyAction(asking, 'n', NO_KEY)).toEqual({ type: 'abort_cancel' });
    expect(keyAction(asking, '', { ...NO_KEY, escape: true })).toEqual({ type: 'abort_cancel' });
  });

  test('Ctrl-C interrupts while running and leaves once over; q only leaves once over', () => {
    const ctrl = { ...NO_KEY, ctrl: true };
    expect(keyAction(withState({}), 'c', ctrl)).toEqual({ type: 'interrupt' });
    expect(keyAction(withState({}, { over: true }), 'c', ctrl)).toEqual({ type: 'quit' });
    expect(keyAction(withState({}), 'q', NO_KEY).type).toBe('hint');
    expect(keyAction(withState({}, { over: true }), 'q', NO_KEY)).toEqual({ type: 'quit' });
  });

  test('scroll keys work in every mode; letters scroll only when not typing', () => {
    expect(keyAction(withState({}), '', { ...NO_KEY, pageUp: true })).toEqual({
      type: 'scroll',
      command: 'page_up',
    });
    expect(keyAction(withState({}), 'k', NO_KEY)).toEqual({ type: 'scroll', command: 'line_up' });
    expect(keyAction(withState({}), 'G', NO_KEY)).toEqual({ type: 'scroll', command: 'bottom' });
    expect(keyAction(withState(text), '', { ...NO_KEY, end: true })).toEqual({
      type: 'scroll',
      command: 'bottom',
    });
    expect(keyAction(withState(text), 'k', NO_KEY)).toEqual({ type: 'draft', draft: 'k' });
  });

  test('a text gate edits the draft: Enter sends, Ctrl-J and Alt-Enter add a line, Esc declines', () => {
    const typing = (draft: string) => withState(text, { draft });
    expect(keyAction(typing('ab'), 'c', NO_KEY)).toEqual({ type: 'draft', draft: 'abc' });
    expect(keyAction(typing('ab'), '\n', NO_KEY)).toEqual({ type: 'draft', draft: 'ab\n' });
    expect(keyAction(typing('ab'), '', { ...NO_KEY, return: true, meta: true })).toEqual({
      type: 'draft',
      draft: 'ab\n',
    });
    expect(keyAction(typing('ab'), '', { ...NO_KEY, return: true })).toEqual({ type: 'answer', text: 'ab' });
    expect(keyAction(typing('  '), '', { ...NO_KEY, return: true }).type).toBe('hint');
    expect(keyAction(typing('ab'), '', { ...NO_KEY, backspace: true })).toEqual({
      type: 'draft',
      draft: 'a',
    });
    expect(keyAction(typing('ab'), 'u', { ...NO_KEY, ctrl: true })).toEqual({ type: 'draft', draft: '' });
    expect(keyAction(typing('ab'), '', { ...NO_KEY, escape: true })).toEqual({
      type: 'gate',
      decision: 'reject',
    });
    // A pasted block keeps its line breaks instead of submitting.
    expect(keyAction(typing(''), 'one\rtwo', NO_KEY)).toEqual({ type: 'draft', draft: 'one\ntwo' });
  });
});

describe('keys in the app answer the gate port', () => {
  test('y approves the spec gate on screen; n rejects the next one', async () => {
    const s = new Script();
    const app = renderApp(s.store);
    const signal = new AbortController().signal;
    const first = app.controller.gates.ask(specGate, signal);
    await app.waitFor('Approve the specification?');
    expect(app.frame()).toContain('1. Parse');
    app.press('y');
    await expect(first).resolves.toEqual({ decision: 'approve', by: 'human' });
    await app.waitFor((f) => !f.includes('Approve the specification?'), 'the gate closed');

    const second = app.controller.gates.ask(
      { ...specGate, gate: 'qa', title: 'Approve the QA report?' },
      signal,
    );
    app.press('n');
    await app.waitFor('Why do you reject?');
    // Esc goes back to the question: nothing was rejected.
    app.press(KEY.escape);
    await app.waitFor((f) => !f.includes('Why do you reject?'), 'the question again');
    expect(app.frame()).toContain('Approve the QA report?');
    app.press('n');
    await app.waitFor('Why do you reject?');
    for (const key of [...'no tests', KEY.backspace, 's']) app.press(key);
    await app.waitFor('no tests▌');
    app.press(KEY.enter);
    await expect(second).resolves.toEqual({ decision: 'reject', by: 'human', reason: 'no tests' });
    await app.waitFor((f) => !f.includes('Approve the QA report?'), 'the gate closed');

    // A reject without a reason is still a reject, with nothing recorded as its reason.
    const third = app.controller.gates.ask({ ...specGate, gate: 'qa', title: 'Approve again?' }, signal);
    await app.waitFor('Approve again?');
    app.press('n');
    await app.waitFor('Why do you reject?');
    app.press(KEY.enter);
    await expect(third).resolves.toEqual({ decision: 'reject', by: 'human' });
    app.unmount();
  });

  test('a text gate takes a typed multi-line answer; Enter sends it', async () => {
    const s = new Script();
    const app = renderApp(s.store);
    const answer = app.controller.gates.ask(inputGate, new AbortController().signal);
    for (const key of ['S', 'Q', 'L', 'x', KEY.backspace, 'i', 't', 'e', KEY.ctrlJ, 'y', 'e', 's'])
      app.press(key);
    await app.waitFor('yes▌');
    expect(app.frame()).toContain('› SQLite');
    app.press(KEY.enter);
    await expect(answer).resolves.toEqual({ decision: 'answer', by: 'human', text: 'SQLite\nyes' });
    app.unmount();
  });

  test('Esc declines a text gate', async () => {
    const s = new Script();
    const app = renderApp(s.store);
    const answer = app.controller.gates.ask(inputGate, new AbortController().signal);
    app.press(KEY.escape);
    await expect(answer).resolves.toEqual({ decision: 'reject', by: 'human' });
    app.unmount();
  });

  test('an aborted signal answers "reject, by nobody" and clears the gate', async () => {
    const s = new Script();
    const app = renderApp(s.store);
    const controller = new AbortController();
    const answer = app.controller.gates.ask(specGate, controller.signal);
    await app.waitFor('Approve the specification?');
    controller.abort();
    await expect(answer).resolves.toEqual({ decision: 'reject', by: 'nobody' });
    await app.waitFor((f) => !f.includes('Approve the specification?'), 'the gate cleared');
    await expect(app.controller.gates.ask(specGate, controller.signal)).resolves.toEqual({
      decision: 'reject',
      by: 'nobody',
    });
    app.unmount();
  });
});

describe('abort, interrupt and quit keys', () => {
  test('a then y aborts once; a then n cancels', async () => {
    const onAbort = vi.fn();
    const s = new Script();
    const app = renderApp(s.store, { onAbort });
    app.press('a');
    await app.waitFor('Abort the running work?');
    app.press('n');
    await app.waitFor((f) => !f.includes('Abort the running work?'), 'the question gone');
    expect(onAbort).not.toHaveBeenCalled();
    app.press('a');
    app.press('y');
    expect(onAbort).toHaveBeenCalledTimes(1);
    await app.waitFor('ABORTING');
    app.unmount();
  });

  test('a pressed twice aborts, even at a yes/no gate (y there means "abort", not "approve")', async () => {
    const onAbort = vi.fn();
    const s = new Script();
    const app = renderApp(s.store, { onAbort });
    const gate = app.controller.gates.ask(specGate, new AbortController().signal);
    app.press('a');
    app.press('a');
    expect(onAbort).toHaveBeenCalledTimes(1);
    let settled = false;
    void gate.then(() => {
      settled = true;
    });
    await settle();
    expect(settled).toBe(false);
    app.controller.gates.cancelAll();
    app.unmount();
  });

  test('Ctrl-C calls onAbort the first time and onForceQuit the second', () => {
    const onAbort = vi.fn();
    const onForceQuit = vi.fn();
    const app = renderApp(new Script().store, { onAbort, onForceQuit });
    app.press(KEY.ctrlC);
    expect(onAbort).toHaveBeenCalledTimes(1);
    expect(onForceQuit).not.toHaveBeenCalled();
    app.press(KEY.ctrlC);
    expect(onForceQuit).toHaveBeenCalledTimes(1);
    expect(onAbort).toHaveBeenCalledTimes(1);
    app.unmount();
  });

  test('q leaves only once the run is over', async () => {
    const s = new Script();
    const app = renderApp(s.store);
    let left = false;
    void app.controller.quit.then(() => {
      left = true;
    });
    app.press('q');
    await app.waitFor('q leaves once the run is over');
    await settle();
    expect(left).toBe(false);
    app.controller.markOver();
    await app.waitFor((f) => /q\s+quit/.test(f), 'q in the footer');
    app.press('q');
    await app.controller.quit;
    await settle();
    expect(left).toBe(true);
    app.unmount();
  });

  test('PgUp scrolls the output back a page, End follows again', async () => {
    const s = new Script();
    for (let i = 0; i < 200; i++)
      s.emit({ type: 'agent.output', role: 'dev', text: `line ${i}`, kind: 'text' });
    s.store.flush();
    const app = renderApp(s.store, { columns: 100, rows: 30 });
    expect(app.frame()).toContain('line 199');
    app.press(KEY.pageUp);
    await app.waitFor('End follows');
    expect(app.frame()).not.toContain('line 199');
    expect(app.frame()).toContain('line 175');
    app.press(KEY.end);
    await app.waitFor((f) => f.includes('line 199') && !f.includes('End follows'), 'the newest line again');
    app.unmount();
  });
});
