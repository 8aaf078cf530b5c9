import { describe, expect, test, vi } from 'vitest';

vi.hoisted(() => {
  delete process.env.CI;
});

import type { GateRequest } from '../../source/engine/gates.js';
import { contextKeys } from '../../source/ui/keys/key-help.js';
import { type KeyInfo, keyAction } from '../../source/ui/keys/key-map.js';
import { initialUiState, type UiState } from '../../source/ui/store/ui-state.js';
import { KEY, NO_KEY, plain, renderApp, Script, T0 } from './helpers.js';

// Issue 16 item 11: `?` lists every key in the current context. Every key pressed in every
// context: each one that acts (anything but nothing or a hint) must be in the list, and each
// key the list names must act.

type Press = { readonly name: string; readonly input: string; readonly key: KeyInfo };

const special = (name: string, patch: Partial<KeyInfo>): Press => ({
  name,
  input: '',
  key: { ...NO_KEY, ...patch },
});
const PRESSES: Press[] = [
  ...'abcdefghijklmnopqrstuvwxyzG?1 '.split('').map((c) => ({
    name: c === ' ' ? 'Space' : c,
    input: c,
    key: NO_KEY,
  })),
  special('↑', { upArrow: true }),
  special('↓', { downArrow: true }),
  special('←', { leftArrow: true }),
  special('→', { rightArrow: true }),
  special('PgUp', { pageUp: true }),
  special('PgDn', { pageDown: true }),
  special('Home', { home: true }),
  special('End', { end: true }),
  special('Esc', { escape: true }),
  special('Tab', { tab: true }),
  { name: 'Enter', input: '\r', key: { ...NO_KEY, return: true } },
  { name: 'Ctrl-C', input: 'c', key: { ...NO_KEY, ctrl: true } },
  { name: 'Ctrl-P', input: 'p', key: { ...NO_KEY, ctrl: true } },
  { name: 'Ctrl-U', input: 'u', key: { ...NO_KEY, ctrl: true } },
  { name: 'Ctrl-J', input: '\n', key: NO_KEY },
  special('Backspace', { backspace: true }),
];

const docs = [
  { name: 'specs/SPEC.md', text: '# Spec\n' },
  { name: 'specs/TASKS.md', text: '1. Parse\n' },
];
function state(
  gate: UiState['gate'],
  interaction: Partial<UiState['interaction']> = {},
  view: UiState['view'] = 'workflow',
): UiState {
  const base = initialUiState(view, 'demo', T0);
  return { ...base, gate, interaction: { ...base.interaction, ...interaction } };
}
const yesNo = { gate: 'spec', title: 't', lines: [], answer: 'yes_no', documents: docs } as const;
const planGate = { gate: 'plan', title: 't', lines: [], answer: 'text' } as const;

/** Two parallel lanes (issue 19): Tab switches the Output panel between them. */
function withLanes(s: UiState, outputLane: string | null = null): UiState {
  const row = (lane: string, task: number) => ({
    lane,
    task,
    title: `Task ${task}`,
    phase: 'ticking' as const,
    detail: null,
    agent: null,
    tickPhase: null,
    lastLine: null,
    startedAtMs: T0,
    endedAtMs: null,
    costUsd: 0,
    breaker: null,
  });
  return {
    ...s,
    lanes: { rows: [row('task-1-1', 1), row('task-2-1', 2)], merge: null },
    interaction: { ...s.interaction, outputLane },
  };
}

const run = (id: string, role: string) => ({
  id,
  role,
  attempt: 1,
  startedAt: '2025-01-01T10:00:00Z',
  bytes: 100,
  running: false,
  path: `relais/history/agents/${id}`,
});
const runs = [run('c.log', 'qa'), run('b.log', 'builder'), run('a.log', 'spec')];
const list = { kind: 'logs', entries: runs, selected: 1, error: null } as const;

const CONTEXTS: Array<[string, UiState]> = [
  ['lanes running, all output', withLanes(state(null))],
  ['lanes running, one lane shown, at a yes/no gate', withLanes(state(yesNo), 'task-2-1')],
  ['lanes over', withLanes(state(null, { over: true }), 'task-1-1')],
  ['lanes, a planner question (Tab is not typed, does nothing)', withLanes(state(planGate, { draft: 'x' }))],
  ['running, no gate', state(null)],
  ['a loop, running', state(null, {}, 'loop')],
  ['a yes/no gate with documents', state(yesNo)],
  ['a planner question', state(planGate, { draft: 'x' })],
  ['a reason being typed', state(yesNo, { rejecting: true, draft: 'x' })],
  ['the viewer', state(yesNo, { overlay: { kind: 'document', index: 0, top: 0 } })],
  ['confirming an abort', state(null, { confirmingAbort: true })],
  ['aborting', state(null, { aborting: true })],
  ['pausing (p pressed)', state(null, { pausing: true })],
  ['over', state(null, { over: true })],
  // Issue 16 item 11: reading what the agents said.
  ['all the output (o)', state(null, { overlay: { kind: 'output' } })],
  ['all the output over a gate', state(yesNo, { overlay: { kind: 'output' } })],
  ['the list of agent runs (l)', state(null, { overlay: list })],
  [
    "one run's transcript",
    state(null, {
      overlay: {
        kind: 'log',
        entry: runs[1] as (typeof runs)[1],
        document: { name: 'b', text: 'x\n' },
        top: 0,
        list,
      },
    }),
  ],
  ['the list, once over', state(null, { over: true, overlay: list })],
  // Issue 20: attached to a fleet run, and the fleet view.
  ['attached to a fleet run', { ...state(null), remote: { runId: 'run-1', repo: 'r' } }],
  ['attached, at a yes/no gate', { ...state(yesNo), remote: { runId: 'run-1', repo: 'r' } }],
  ['attached, at a question', { ...state(planGate, { draft: 'x' }), remote: { runId: 'run-1', repo: 'r' } }],
  ['the fleet view', state(null, {}, 'fleet')],
  ['the fleet view, over', state(null, { over: true }, 'fleet')],
];

/** Typing contexts: any printable key types, which the list says once as "type". */
const typing = (s: UiState) => s.gate?.answer === 'text' || s.interaction.rejecting;

describe('the ? list of keys', () => {
  for (const [name, s] of CONTEXTS)
    test(`${name}: every key that acts is listed, every listed key acts`, () => {
      const listed = new Set(contextKeys(s).flatMap((k) => k.keys));
      const catchAll = listed.has('any other key') || listed.has('any key');
      for (const press of PRESSES) {
        const action = keyAction(s, press.input, press.key);
        const acts = action.type !== 'none' && action.type !== 'hint';
        const printable = press.input.length === 1 && press.input >= ' ' && !press.key.ctrl;
        if (typing(s) && printable && action.type === 'draft') continue;
        if (acts && !catchAll)
          expect(listed, `${press.name} acts (${action.type}) in "${name}"`).toContain(press.name);
        if (listed.has(press.name) && !acts)
          throw new Error(`${press.name} is listed but does nothing in "${name}"`);
      }
    });

  test('? opens the list over the panels, any key closes it; at a text gate ? is typed', async () => {
    const s = new Script();
    const app = renderApp(s.store);
    app.press('?');
    await app.waitFor('Keys');
    expect(plain(app.frame())).toContain('abort the run');
    expect(plain(app.frame())).toContain('any key closes this list');
    app.press('x');
    await app.waitFor((f) => !f.includes('any key closes this list'), 'the list closed');
    const request: GateRequest = { gate: 'input', title: 'Which DB?', lines: [], answer: 'text' };
    const answer = app.controller.gates.ask(request, new AbortController().signal);
    await app.waitFor('Which DB?');
    app.press('?');
    await app.waitFor('?▌');
    app.press(KEY.enter);
    await expect(answer).resolves.toEqual({ decision: 'answer', by: 'human', text: '?' });
    app.unmount();
  });
});
