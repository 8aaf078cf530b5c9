import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';

vi.hoisted(() => {
  delete process.env.CI;
  // Chalk decides its colour level when imported; force colours so only the theme turns them off.
  process.env.FORCE_COLOR = '1';
});

import { withEngine } from '../../source/cli/engine-session.js';
import type { CommandIo } from '../../source/cli/io.js';
import type { EngineEvent } from '../../source/engine/events.js';
import { FakeTerminal, plain } from './helpers.js';

// What the user settings (`relais config`) change in a command's session: the app's theme, the
// terminal bell, and a warning when the settings file is broken. Each test has its own settings
// folder (RELAIS_CONFIG_DIR), never the real one.

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape sequences is the point
const COLOUR_CODE = /\u001b\[(?:[0-9;]*;)?(?:3[0-9]|4[0-9]|9[0-7]|10[0-7])(?:;[0-9;]*)?m/;
const BEL = '\u0007';

const completed: EngineEvent = {
  type: 'run.finished',
  state: 'COMPLETED',
  status: 'completed',
  reason: null,
  detail: null,
  pr_url: null,
  next_steps: [],
};

const SESSION = { json: false, onInterrupt: 'stopping', view: 'workflow', project: '/tmp/demo' } as const;

let folders: string[] = [];
afterEach(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  folders = [];
});

/** A fake terminal, and a settings folder holding `settings` (text as written, or an object). */
function setUp(settings: unknown) {
  const folder = mkdtempSync(join(tmpdir(), 'relais-prefs-'));
  folders.push(folder);
  if (settings !== undefined)
    writeFileSync(
      join(folder, 'config.json'),
      typeof settings === 'string' ? settings : JSON.stringify(settings),
    );
  const terminal = new FakeTerminal();
  let stderr = '';
  const io: CommandIo = {
    cwd: '/tmp/demo',
    stdin: terminal.stdin as unknown as NodeJS.ReadStream,
    stdout: terminal.stdout as unknown as NodeJS.WriteStream,
    stderr: { write: (text: string) => (stderr += text) },
    env: { TERM: 'xterm-256color', RELAIS_CONFIG_DIR: folder },
  };
  return { terminal, io, folder, stderr: () => stderr };
}

/** A workflow that logs an error (drawn in red when colours are on) and completes; q leaves. */
async function workflowOn(setup: ReturnType<typeof setUp>): Promise<void> {
  const session = withEngine(setup.io, SESSION, async ({ bus }) => {
    bus.emit({ type: 'workflow.changed', state: 'QA', status: 'running', reason: null, detail: null });
    bus.emit({ type: 'agent.output', role: 'qa', text: 'compile error', kind: 'error' });
    bus.emit(completed);
    return 0;
  });
  await setup.terminal.stdout.waitFor((out) => /q\S*\s+\S*quit/.test(plain(out)), 'the final screen');
  setup.terminal.stdin.press('q');
  await expect(session).resolves.toBe(0);
}

describe('theme', () => {
  test('"auto" (or no setting) draws in colour; "none" draws none, and stays readable', async () => {
    const auto = setUp({ theme: 'auto' });
    await workflowOn(auto);
    expect(auto.terminal.stdout.output).toMatch(COLOUR_CODE);
    const none = setUp({ theme: 'none' });
    await workflowOn(none);
    expect(none.terminal.stdout.output).not.toMatch(COLOUR_CODE);
    expect(plain(none.terminal.stdout.output)).toContain('compile error');
  });
});

describe('notifications', () => {
  test('enabled: a bell when a gate asks and when the work ends, on stderr only', async () => {
    const on = setUp({ notifications: { enabled: true } });
    const session = withEngine(on.io, { json: true, onInterrupt: 'stopping' }, async ({ bus }) => {
      bus.emit({ type: 'gate.requested', gate: 'spec', title: 'Approve?', lines: [], answer: 'yes_no' });
      expect(on.stderr()).toBe(BEL);
      return 0;
    });
    await expect(session).resolves.toBe(0);
    expect(on.stderr()).toBe(BEL + BEL);
    expect(on.terminal.stdout.output).not.toContain(BEL);
  });

  test('not enabled: no bell; an interrupted work ends without one', async () => {
    const off = setUp({});
    await withEngine(off.io, { json: true, onInterrupt: 'stopping' }, async ({ bus }) => {
      bus.emit({ type: 'gate.requested', gate: 'spec', title: 'Approve?', lines: [], answer: 'yes_no' });
      return 0;
    });
    expect(off.stderr()).toBe('');
    const on = setUp({ notifications: { enabled: true } });
    await withEngine(on.io, { json: true, onInterrupt: 'stopping' }, async ({ signal }) => {
      process.emit('SIGINT', 'SIGINT');
      expect(signal.aborted).toBe(true);
      return 130;
    });
    expect(on.stderr()).toBe('');
  });
});

describe('a broken settings file', () => {
  test.each([
    ['not JSON', '{"theme": '],
    ['a value the schema refuses', { theme: 'purple' }],
  ])('%s: the session warns with its path, and the work runs without it', async (_what, settings) => {
    const broken = setUp(settings);
    const ran = await withEngine(broken.io, { json: false, onInterrupt: 'stopping' }, async () => 0);
    expect(ran).toBe(0);
    expect(plain(broken.terminal.stdout.output)).toContain(
      `user settings ignored for this run: ${join(broken.folder, 'config.json')}: `,
    );
  });
});
