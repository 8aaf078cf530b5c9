import { afterEach, describe, expect, test, vi } from 'vitest';

vi.hoisted(() => {
  delete process.env.CI;
  // Chalk decides its colour level when imported; force colours so NO_COLOR is what turns them off.
  process.env.FORCE_COLOR = '1';
});

import { EngineBus } from '../../source/engine/events.js';
import { type InkFrontEnd, startInkFrontEnd } from '../../source/ui/index.js';
import { colorsWanted } from '../../source/ui/theme.js';
import { FakeTerminal, renderApp, Script } from './helpers.js';

// SGR colour parameters: 30-37, 39, 40-47, 49, 90-97, 100-107, and 38;/48; extended colours.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape sequences is the point
const COLOUR_CODE = /\u001b\[(?:[0-9;]*;)?(?:3[0-9]|4[0-9]|9[0-7]|10[0-7])(?:;[0-9;]*)?m/;

let running: InkFrontEnd[] = [];
afterEach(() => {
  for (const frontEnd of running) frontEnd.restore();
  running = [];
});

function scenario(bus: EngineBus): void {
  bus.emit({
    type: 'workflow.changed',
    state: 'IMPLEMENTATION',
    status: 'running',
    reason: null,
    detail: null,
  });
  bus.emit({ type: 'agent.output', role: 'dev', text: 'compile error', kind: 'error' });
  bus.emit({
    type: 'gate.requested',
    gate: 'qa',
    title: 'Approve the QA report?',
    lines: ['ok'],
    answer: 'yes_no',
  });
}

function start(env: NodeJS.ProcessEnv) {
  const terminal = new FakeTerminal();
  const bus = new EngineBus();
  running.push(
    startInkFrontEnd({
      bus,
      view: 'workflow',
      project: 'demo',
      onAbort: () => {},
      onForceQuit: () => {},
      killChildren: () => {},
      stdin: terminal.stdin as unknown as NodeJS.ReadStream,
      stdout: terminal.stdout as unknown as NodeJS.WriteStream,
      env,
      animate: false,
    }),
  );
  scenario(bus);
  return terminal;
}

describe('NO_COLOR', () => {
  test('set and not empty turns colours off (https://no-color.org)', () => {
    expect(colorsWanted({})).toBe(true);
    expect(colorsWanted({ NO_COLOR: '' })).toBe(true);
    expect(colorsWanted({ NO_COLOR: '1' })).toBe(false);
  });

  test('the app is coloured by default', async () => {
    const terminal = start({});
    await terminal.stdout.waitFor((out) => out.includes('compile error'), 'the output line');
    expect(terminal.stdout.output).toMatch(COLOUR_CODE);
  });

  test('with NO_COLOR the app writes no colour code at all, and stays readable', async () => {
    const terminal = start({ NO_COLOR: '1' });
    await terminal.stdout.waitFor((out) => out.includes('compile error'), 'the output line');
    expect(terminal.stdout.output).not.toMatch(COLOUR_CODE);
    expect(terminal.stdout.output).toContain('✗');
    expect(terminal.stdout.output).toContain('Approve the QA report?');
  });

  test('the same holds for a single render of the app', () => {
    const s = new Script().emit({ type: 'agent.output', role: 'dev', text: 'boom', kind: 'error' });
    s.store.flush();
    const coloured = renderApp(s.store, { colors: true });
    expect(coloured.rawFrame()).toMatch(COLOUR_CODE);
    coloured.unmount();
    const plainApp = renderApp(s.store, { colors: false });
    expect(plainApp.rawFrame()).not.toMatch(COLOUR_CODE);
    plainApp.unmount();
  });
});
