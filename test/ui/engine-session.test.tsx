import { afterEach, describe, expect, test, vi } from 'vitest';

vi.hoisted(() => {
  delete process.env.CI;
});

import { withEngine } from '../../source/cli/engine-session.js';
import type { CommandIo } from '../../source/cli/io.js';
import type { EngineEvent } from '../../source/engine/events.js';
import { ENTER_ALTERNATE_SCREEN, LEAVE_ALTERNATE_SCREEN } from '../../source/ui/terminal.js';
import { FakeTerminal, plain } from './helpers.js';

// The CLI's session with the full-screen app on a fake terminal: what a command gets between its
// start and its exit, with signals delivered the way Node delivers them (process listeners).

const completed: EngineEvent = {
  type: 'run.finished',
  state: 'COMPLETED',
  status: 'completed',
  reason: null,
  detail: null,
  pr_url: null,
  next_steps: [],
};

function ioOn(terminal: FakeTerminal): CommandIo {
  return {
    cwd: '/tmp/demo',
    stdin: terminal.stdin as unknown as NodeJS.ReadStream,
    stdout: terminal.stdout as unknown as NodeJS.WriteStream,
    stderr: { write: () => true },
    env: { TERM: 'xterm-256color' },
  };
}

const SESSION = {
  json: false,
  onInterrupt: 'stopping the agent',
  view: 'workflow',
  project: '/tmp/demo',
} as const;

/** What was written to the normal screen once the app left the alternate one. */
function afterLeaving(terminal: FakeTerminal): string {
  const output = terminal.stdout.output;
  const left = output.lastIndexOf(LEAVE_ALTERNATE_SCREEN);
  return left < 0 ? '' : output.slice(left + LEAVE_ALTERNATE_SCREEN.length);
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the engine session with the full-screen app', () => {
  test('a SIGTERM while the final screen shows leaves at once, with the summary', async () => {
    const terminal = new FakeTerminal();
    const session = withEngine(ioOn(terminal), SESSION, async ({ bus }) => {
      bus.emit(completed);
      return 0;
    });
    await terminal.stdout.waitFor((out) => /q\S*\s+\S*quit/.test(plain(out)), 'the final screen');
    process.emit('SIGTERM', 'SIGTERM');
    await expect(session).resolves.toBe(0);
    expect(afterLeaving(terminal)).toContain('Workflow COMPLETED');
    expect(terminal.stdin.rawMode).toBe(false);
  });

  test('work that throws: the app leaves, the summary is printed on the normal screen, the error goes on', async () => {
    const terminal = new FakeTerminal();
    const failure = new Error('internal failure');
    const session = withEngine(ioOn(terminal), SESSION, async ({ bus }) => {
      bus.emit({ type: 'workflow.changed', state: 'QA', status: 'running', reason: null, detail: null });
      bus.emit({ type: 'log', level: 'error', message: 'QA agent failed' });
      bus.emit({ type: 'log', level: 'info', message: 'Fix: read relais/history' });
      await terminal.stdout.waitFor((out) => out.includes('QA agent failed'), 'the app at work');
      throw failure;
    });
    await expect(session).rejects.toBe(failure);
    expect(terminal.stdout.output.split(LEAVE_ALTERNATE_SCREEN)).toHaveLength(2);
    expect(afterLeaving(terminal)).toMatch(/QA agent failed\n.*Fix: read relais\/history\n$/);
    expect(terminal.stdin.rawMode).toBe(false);
  });

  test('a second SIGTERM while the app is up restores the terminal before the forced exit', async () => {
    const terminal = new FakeTerminal();
    const atExit: Array<{ code: unknown; restored: boolean; rawMode: boolean }> = [];
    vi.spyOn(process, 'exit').mockImplementation(((code?: number) => {
      atExit.push({
        code,
        restored: terminal.stdout.output.includes(LEAVE_ALTERNATE_SCREEN),
        rawMode: terminal.stdin.rawMode,
      });
    }) as typeof process.exit);
    let stopped: () => void = () => {};
    const session = withEngine(ioOn(terminal), SESSION, async ({ bus, signal }) => {
      bus.emit({ type: 'agent.output', role: 'dev', text: 'working', kind: 'text' });
      // A slow stop (a rollback): the second signal comes before the work is over.
      await new Promise<void>((resolve) => {
        stopped = resolve;
      });
      return signal.aborted ? 130 : 0;
    });
    await terminal.stdout.waitFor((out) => out.includes('working'), 'the app at work');
    process.emit('SIGTERM', 'SIGTERM');
    expect(atExit).toEqual([]);
    process.emit('SIGTERM', 'SIGTERM');
    expect(atExit).toEqual([{ code: 130, restored: true, rawMode: false }]);
    stopped();
    await expect(session).resolves.toBe(130);
    expect(terminal.stdout.output.split(LEAVE_ALTERNATE_SCREEN)).toHaveLength(2);
  });

  test('a second Ctrl-C in the app takes the same forced exit, once', async () => {
    const terminal = new FakeTerminal();
    const exits: unknown[] = [];
    vi.spyOn(process, 'exit').mockImplementation(((code?: number) => {
      exits.push([code, terminal.stdout.output.includes(LEAVE_ALTERNATE_SCREEN)]);
    }) as typeof process.exit);
    let stopped: () => void = () => {};
    const session = withEngine(ioOn(terminal), SESSION, async ({ bus }) => {
      bus.emit({ type: 'agent.output', role: 'dev', text: 'working', kind: 'text' });
      await new Promise<void>((resolve) => {
        stopped = resolve;
      });
      return 130;
    });
    await terminal.stdout.waitFor((out) => out.includes('working'), 'the app at work');
    terminal.stdin.press('\u0003');
    expect(exits).toEqual([]);
    terminal.stdin.press('\u0003');
    process.emit('SIGTERM', 'SIGTERM');
    expect(exits).toEqual([[130, true]]);
    stopped();
    await session;
  });

  test('SIGHUP (the terminal closed) stops the work like SIGTERM; a repeated one never force-quits', async () => {
    const terminal = new FakeTerminal();
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => {}) as typeof process.exit);
    let stopped: () => void = () => {};
    let aborted: unknown = null;
    const session = withEngine(ioOn(terminal), SESSION, async ({ bus, signal }) => {
      bus.emit({ type: 'agent.output', role: 'dev', text: 'working', kind: 'text' });
      signal.addEventListener('abort', () => {
        aborted = signal.reason;
      });
      await new Promise<void>((resolve) => {
        stopped = resolve;
      });
      return 130;
    });
    await terminal.stdout.waitFor((out) => out.includes('working'), 'the app at work');
    process.emit('SIGHUP', 'SIGHUP');
    expect(aborted).toBe('SIGHUP');
    process.emit('SIGHUP', 'SIGHUP'); // the shell passing the same hang-up on
    expect(exit).not.toHaveBeenCalled();
    stopped();
    await expect(session).resolves.toBe(130);
    expect(terminal.stdin.rawMode).toBe(false);
  });

  test('with plain lines, a write error on a closed output does not crash the stop', async () => {
    const terminal = new FakeTerminal();
    const io = { ...ioOn(terminal), env: { CI: '1' } };
    const session = withEngine(io, SESSION, async ({ bus }) => {
      bus.emit({ type: 'log', level: 'info', message: 'stopping' });
      // What a write to a hung-up terminal does, after the write call returned.
      terminal.stdout.emit('error', Object.assign(new Error('write EIO'), { code: 'EIO' }));
      return 130;
    });
    await expect(session).resolves.toBe(130);
    expect(terminal.stdout.output).toContain('stopping');
  });

  test('a start that could not start prints its lines as plain text, never opening the full-screen app', async () => {
    const terminal = new FakeTerminal();
    const session = withEngine(ioOn(terminal), SESSION, async ({ bus }) => {
      bus.emit({ type: 'log', level: 'info', message: 'Initialised relais in /tmp/demo' });
      bus.emit({
        type: 'log',
        level: 'error',
        message: `Cannot start: ${'not a git repository '.repeat(8)}`,
      });
      bus.emit({
        type: 'log',
        level: 'info',
        message: 'Fix: Run ralphy start at the root of a git repository',
      });
      return 3;
    });
    // No key is needed: nothing waits on a final screen.
    await expect(session).resolves.toBe(3);
    const out = terminal.stdout.output;
    expect(out).not.toContain(ENTER_ALTERNATE_SCREEN);
    expect(terminal.stdin.rawMode).toBe(false);
    // Whole lines, never cut to the terminal's width: the error and its fix.
    expect(plain(out)).toContain(`Cannot start: ${'not a git repository '.repeat(8).trim()}`);
    expect(plain(out)).toMatch(/Cannot start: .*\n.*Fix: Run ralphy start at the root of a git repository\n/);
  });

  test('the app opens with the first sign of work, and its screen holds what was logged before', async () => {
    const terminal = new FakeTerminal();
    const session = withEngine(ioOn(terminal), SESSION, async ({ bus }) => {
      bus.emit({ type: 'log', level: 'warn', message: 'gh: not found, the PR will be left ready' });
      expect(terminal.stdout.output).not.toContain(ENTER_ALTERNATE_SCREEN);
      bus.emit({
        type: 'workflow.changed',
        state: 'SPECIFICATION',
        status: 'running',
        reason: null,
        detail: null,
      });
      await terminal.stdout.waitFor((out) => out.includes('gh: not found'), 'the early log line in the app');
      bus.emit(completed);
      return 0;
    });
    await terminal.stdout.waitFor((out) => /q\S*\s+\S*quit/.test(plain(out)), 'the final screen');
    expect(terminal.stdout.output).toContain(ENTER_ALTERNATE_SCREEN);
    terminal.stdin.press('q');
    await expect(session).resolves.toBe(0);
    expect(afterLeaving(terminal)).toContain('Workflow COMPLETED');
  });

  test('errors logged on the way come before the end of the work', async () => {
    const terminal = new FakeTerminal();
    const session = withEngine(ioOn(terminal), SESSION, async ({ bus }) => {
      bus.emit({ type: 'log', level: 'error', message: 'STATE.json not written: disk full' });
      bus.emit(completed);
      return 0;
    });
    await terminal.stdout.waitFor((out) => /q\S*\s+\S*quit/.test(plain(out)), 'the final screen');
    terminal.stdin.press('q');
    await session;
    expect(afterLeaving(terminal)).toBe('ERROR: STATE.json not written: disk full\nWorkflow COMPLETED\n');
  });
});
