import { afterEach, describe, expect, test, vi } from 'vitest';

vi.hoisted(() => {
  delete process.env.CI;
});

import { EngineBus } from '../../source/engine/events.js';
import { killAllChildrenNow } from '../../source/engine/supervise/live-groups.js';
import { runProcess } from '../../source/engine/supervise/run-process.js';
import { type InkFrontEnd, startInkFrontEnd } from '../../source/ui/index.js';
import { CLEAR_SCREEN, ENTER_ALTERNATE_SCREEN, LEAVE_ALTERNATE_SCREEN } from '../../source/ui/terminal.js';
import { FakeTerminal, plain } from './helpers.js';

let running: InkFrontEnd[] = [];

afterEach(() => {
  for (const frontEnd of running) frontEnd.restore();
  running = [];
});

function start(terminal: FakeTerminal, options: { onAbort?: () => void; env?: NodeJS.ProcessEnv } = {}) {
  const bus = new EngineBus();
  const frontEnd = startInkFrontEnd({
    bus,
    view: 'workflow',
    project: 'demo',
    onAbort: options.onAbort ?? (() => {}),
    onForceQuit: () => {},
    killChildren: killAllChildrenNow,
    stdin: terminal.stdin as unknown as NodeJS.ReadStream,
    stdout: terminal.stdout as unknown as NodeJS.WriteStream,
    env: options.env ?? {},
    animate: false,
  });
  running.push(frontEnd);
  return { bus, frontEnd };
}

/** The text of the last full frame Ink wrote (escape codes removed). */
function lastFrame(terminal: FakeTerminal): string[] {
  const write = terminal.stdout.writes.findLast((w) => w.includes('╭'));
  return plain(write)
    .split('\n')
    .filter((line) => line.trim() !== '');
}

const count = (text: string, part: string) => text.split(part).length - 1;

/** Rejects after `ms`: a wait that failed ends the test instead of hanging it. */
function deadline(ms: number, what: string): Promise<never> {
  return new Promise((_, reject) => {
    setTimeout(() => reject(new Error(`never saw ${what} within ${ms} ms`)), ms).unref();
  });
}

describe('the Ink front end owns the terminal', () => {
  test('enters the alternate screen before drawing and shows the bus events', async () => {
    const terminal = new FakeTerminal();
    const { bus } = start(terminal);
    expect(terminal.stdout.writes[0]).toBe(ENTER_ALTERNATE_SCREEN);
    expect(terminal.stdin.rawMode).toBe(true);
    bus.emit({
      type: 'workflow.changed',
      state: 'SPECIFICATION',
      status: 'running',
      reason: null,
      detail: null,
    });
    bus.emit({ type: 'agent.output', role: 'spec', text: 'Drafting the spec', kind: 'text' });
    await terminal.stdout.waitFor((out) => out.includes('Drafting the spec'), 'the agent output');
    const frame = lastFrame(terminal);
    expect(frame.length).toBeLessThan(30);
    for (const line of frame) expect([...line].length).toBeLessThanOrEqual(100);
  });

  test('finish keeps the final screen until q, then restores and prints the summary after leaving', async () => {
    const terminal = new FakeTerminal();
    const { bus, frontEnd } = start(terminal);
    bus.emit({
      type: 'run.finished',
      state: 'COMPLETED',
      status: 'completed',
      reason: null,
      detail: null,
      pr_url: null,
      next_steps: [],
    });
    let done = false;
    const finished = frontEnd.finish(['Workflow COMPLETED', 'Next: review the PR']).then(() => {
      done = true;
    });
    await terminal.stdout.waitFor((out) => /q\S*\s+\S*quit/.test(plain(out)), 'the q key in the footer');
    expect(done).toBe(false);
    expect(terminal.stdout.output).not.toContain(LEAVE_ALTERNATE_SCREEN);
    terminal.stdin.press('q');
    await finished;
    const output = terminal.stdout.output;
    const left = output.lastIndexOf(LEAVE_ALTERNATE_SCREEN);
    expect(left).toBeGreaterThan(0);
    expect(output.slice(left + LEAVE_ALTERNATE_SCREEN.length)).toBe(
      'Workflow COMPLETED\nNext: review the PR\n',
    );
    expect(terminal.stdin.rawMode).toBe(false);
  });

  test('a signal while the final screen shows leaves at once (leaveOn), summary printed', async () => {
    const terminal = new FakeTerminal();
    const { frontEnd } = start(terminal);
    const interrupt = new AbortController();
    let done = false;
    const finished = frontEnd.finish(['Workflow COMPLETED'], { leaveOn: interrupt.signal }).then(() => {
      done = true;
    });
    await terminal.stdout.waitFor((out) => /q\S*\s+\S*quit/.test(plain(out)), 'the q key in the footer');
    expect(done).toBe(false);
    interrupt.abort('SIGTERM');
    await finished;
    const output = terminal.stdout.output;
    expect(output.slice(output.lastIndexOf(LEAVE_ALTERNATE_SCREEN))).toBe(
      `${LEAVE_ALTERNATE_SCREEN}Workflow COMPLETED\n`,
    );
    expect(terminal.stdin.rawMode).toBe(false);
  });

  test('finish with an interrupt already received leaves at once', async () => {
    const terminal = new FakeTerminal();
    const { frontEnd } = start(terminal);
    await frontEnd.finish(['bye'], { leaveOn: AbortSignal.abort('SIGINT') });
    expect(terminal.stdout.output.endsWith(`${LEAVE_ALTERNATE_SCREEN}bye\n`)).toBe(true);
  });

  test('finish without waiting resolves at once; restore is idempotent', async () => {
    const terminal = new FakeTerminal();
    const { frontEnd } = start(terminal);
    await frontEnd.finish(['bye'], { waitForQuit: false });
    frontEnd.restore();
    await frontEnd.finish(['bye again']);
    expect(count(terminal.stdout.output, LEAVE_ALTERNATE_SCREEN)).toBe(1);
    expect(terminal.stdout.output.endsWith('bye\n')).toBe(true);
  });

  test('restore answers waiting gates with "nobody" and removes its process hooks', async () => {
    const exitBefore = process.listenerCount('exit');
    const crashBefore = process.listenerCount('uncaughtExceptionMonitor');
    const terminal = new FakeTerminal();
    const { frontEnd } = start(terminal);
    expect(process.listenerCount('uncaughtExceptionMonitor')).toBe(crashBefore + 1);
    const answer = frontEnd.gates.ask(
      { gate: 'spec', title: 'Approve?', lines: [], answer: 'yes_no' },
      new AbortController().signal,
    );
    frontEnd.restore();
    await expect(answer).resolves.toEqual({ decision: 'reject', by: 'nobody' });
    expect(process.listenerCount('exit')).toBe(exitBefore);
    expect(process.listenerCount('uncaughtExceptionMonitor')).toBe(crashBefore);
  });

  test('a crash restores the terminal before Node prints it (exit and crash hooks)', () => {
    const crashBefore = process.listeners('uncaughtExceptionMonitor');
    const exitBefore = process.listeners('exit');
    const terminal = new FakeTerminal();
    start(terminal);
    const onCrash = process.listeners('uncaughtExceptionMonitor').find((l) => !crashBefore.includes(l));
    const onExit = process.listeners('exit').filter((l) => !exitBefore.includes(l));
    expect(onCrash).toBeDefined();
    expect(onExit.length).toBeGreaterThan(0);
    onCrash?.(new Error('boom'), 'uncaughtException');
    expect(terminal.stdout.output.endsWith(LEAVE_ALTERNATE_SCREEN)).toBe(true);
    expect(terminal.stdin.rawMode).toBe(false);
  });

  test('a crash also kills the agents still running (their own process groups outlive the process)', async () => {
    const crashBefore = process.listeners('uncaughtExceptionMonitor');
    const terminal = new FakeTerminal();
    start(terminal);
    let group = 0;
    let spawned: () => void = () => {};
    const started = new Promise<void>((resolve) => {
      spawned = resolve;
    });
    // An agent that would run for ever, in its own process group like every child of runProcess.
    const agent = runProcess({
      cmd: process.execPath,
      args: ['-e', 'setInterval(() => {}, 1000)'],
      cwd: process.cwd(),
      env: {},
      onSpawn: (pid) => {
        group = pid;
        spawned();
      },
    });
    try {
      // The process port may load its spawner first: the group exists once onSpawn has run.
      await Promise.race([started, deadline(10_000, 'the agent started')]);
      expect(group).toBeGreaterThan(0);
      const onCrash = process.listeners('uncaughtExceptionMonitor').find((l) => !crashBefore.includes(l));
      onCrash?.(new Error('boom'), 'uncaughtException');
      expect(terminal.stdout.output.endsWith(LEAVE_ALTERNATE_SCREEN)).toBe(true);
      // Killed by the crash hook, not by a timeout or an abort (runProcess has neither here).
      const ended = await Promise.race([agent, deadline(10_000, 'the agent killed')]);
      expect(ended).toMatchObject({ signal: 'SIGKILL', aborted: false, timedOut: false });
    } finally {
      try {
        // The test failed: leave no process behind (never group 0: that is this process's own).
        if (group > 0) process.kill(-group, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  });

  test('a closed terminal (writes fail with EIO) restores the app instead of crashing the process', async () => {
    const terminal = new FakeTerminal();
    const { frontEnd } = start(terminal);
    const answer = frontEnd.gates.ask(
      { gate: 'spec', title: 'Approve?', lines: [], answer: 'yes_no' },
      new AbortController().signal,
    );
    terminal.stdout.destroyed = true;
    terminal.stdout.emit('error', Object.assign(new Error('write EIO'), { code: 'EIO' }));
    await expect(answer).resolves.toEqual({ decision: 'reject', by: 'nobody' });
    expect(terminal.stdin.rawMode).toBe(false);
    // Ink's last write and the summary may fail the same way, later: still heard.
    terminal.stdout.emit('error', Object.assign(new Error('write EIO'), { code: 'EIO' }));
    await frontEnd.finish(['bye']);
  });

  test('a resize clears the screen and redraws at the new size', async () => {
    const terminal = new FakeTerminal(120, 40);
    const { bus } = start(terminal);
    bus.emit({ type: 'workflow.changed', state: 'QA', status: 'running', reason: null, detail: null });
    await terminal.stdout.waitFor((out) => out.includes('Phases'), 'the first frame');
    const writesBefore = terminal.stdout.writes.length;
    terminal.stdout.resize(70, 20);
    expect(terminal.stdout.writes.slice(writesBefore)).toContain(CLEAR_SCREEN);
    await terminal.stdout.waitFor(() => {
      const frame = lastFrame(terminal);
      return frame.length > 0 && frame.every((line) => [...line].length <= 70) && frame.length < 20;
    }, 'a frame at 70x20');
    expect(lastFrame(terminal)[0]).toContain('QA');
  });

  test('Ctrl-C reaches onAbort through the real input path', async () => {
    const terminal = new FakeTerminal();
    const onAbort = vi.fn();
    start(terminal, { onAbort });
    terminal.stdin.press('\u0003');
    expect(onAbort).toHaveBeenCalledTimes(1);
  });
});
