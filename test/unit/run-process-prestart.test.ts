import { existsSync, mkdtempSync, readFileSync, rmSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type Prestarted,
  runProcess,
  type SpawnSpec,
  prestartProcess as startAhead,
} from '../../source/engine/supervise/run-process.js';
import { isAlive } from '../support/project.js';

// A child started before its input is known (issue 17: the orchestrator's CLI loads while the
// runner finishes preflight): adopted only by a call that would start the very same process.

let dir: string;
/** Every handle a test took, so that none of its children outlives it. */
const handles: Prestarted[] = [];
afterEach(async () => {
  await Promise.all(handles.splice(0).map((h) => h.discard()));
  rmSync(dir, { recursive: true, force: true });
});

async function prestartProcess(spec: SpawnSpec): Promise<Prestarted | null> {
  const handle = await startAhead(spec);
  if (handle) handles.push(handle);
  return handle;
}

/** A shell that adds its pid to `pidFile` as it starts, then runs `script`. */
function notingPid(pidFile: string, script: string, env: NodeJS.ProcessEnv = process.env): SpawnSpec {
  return { cmd: '/bin/sh', args: ['-c', `echo $$ >> "$1"; ${script}`, 'sh', pidFile], cwd: dir, env };
}

/** A child that notes its pid, then echoes its stdin: `cat` shows what reached it. */
const echoing = (pidFile: string, env?: NodeJS.ProcessEnv) => notingPid(pidFile, 'exec cat', env);

/** The last pid noted in `file`. */
const pidIn = (file: string) => Number(readFileSync(file, 'utf8').trim().split('\n').at(-1));

/** The pid a prestarted child notes once it runs: awaited on the folder's events, not on a timer. */
function startedPid(file: string): Promise<number> {
  const written = () => existsSync(file) && readFileSync(file, 'utf8').endsWith('\n');
  return new Promise((resolve) => {
    const check = () => {
      if (!written()) return;
      watcher.close();
      resolve(pidIn(file));
    };
    const watcher = watch(dirname(file), check);
    check();
  });
}

describe('prestarted processes', () => {
  it('a call with the same spec adopts the waiting child: one process, which gets exactly its input', async () => {
    dir = mkdtempSync(join(tmpdir(), 'relais-prestart-'));
    const pidFile = join(dir, 'pid');
    const early = await prestartProcess(echoing(pidFile));
    const r = await runProcess({ ...echoing(pidFile), stdin: 'the prompt' });
    expect(r.exitCode).toBe(0);
    expect(r.stdoutTail).toBe('the prompt');
    // Started once: the pid the child noted is the prestarted one, not a second child's.
    expect(readFileSync(pidFile, 'utf8').trim().split('\n')).toHaveLength(1);
    expect(pidIn(pidFile)).toBe(early?.pid);
    expect(isAlive(pidIn(pidFile))).toBe(false);
    // Adopted, so its handle has nothing left to end.
    await early?.discard();
  });

  it('a call whose process would differ in anything (here one variable) starts its own; the waiting one is ended unused', async () => {
    dir = mkdtempSync(join(tmpdir(), 'relais-prestart-'));
    const early = join(dir, 'early');
    const late = join(dir, 'late');
    const handle = await prestartProcess(echoing(early));
    const waiting = await startedPid(early);
    const r = await runProcess({ ...echoing(early, { ...process.env, RELAIS_OTHER: '1' }), stdin: 'x' });
    expect(r.stdoutTail).toBe('x');
    expect(pidIn(early)).not.toBe(waiting);
    expect(isAlive(waiting)).toBe(true);
    // A call without input never adopts one either: its stdin is /dev/null, not a held pipe.
    const none = await runProcess({ ...echoing(late) });
    expect(none.stdoutTail).toBe('');
    expect(isAlive(waiting)).toBe(true);
    await handle?.discard();
    expect(isAlive(waiting)).toBe(false);
  });

  it('a child that ended while it waited is not adopted: the call starts its own, as without a prestart', async () => {
    dir = mkdtempSync(join(tmpdir(), 'relais-prestart-'));
    const pids = join(dir, 'pids');
    const spec = notingPid(pids, 'echo loaded; echo broken >&2; exit 3');
    const early = await prestartProcess(spec);
    await early?.ended;
    const r = await runProcess({ ...spec, stdin: 'too late' });
    expect(r.exitCode).toBe(3);
    expect(r.stdoutTail).toBe('loaded\n');
    expect(r.stderrTail).toBe('broken\n');
    expect(readFileSync(pids, 'utf8').trim().split('\n')).toHaveLength(2);
  });

  it('a child that waited past the limit is not adopted (Claude Code runs promptless after 3 s of silence)', async () => {
    dir = mkdtempSync(join(tmpdir(), 'relais-prestart-'));
    const pids = join(dir, 'pids');
    const early = await prestartProcess(echoing(pids));
    const waiting = await startedPid(pids);
    // Only the clock moves on: nothing here waits for those seconds.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 2500);
      const r = await runProcess({ ...echoing(pids), stdin: 'late' });
      expect(r.stdoutTail).toBe('late');
    } finally {
      vi.useRealTimers();
    }
    expect(readFileSync(pids, 'utf8').trim().split('\n')).toHaveLength(2);
    expect(pidIn(pids)).not.toBe(waiting);
    expect(isAlive(waiting)).toBe(false);
    await early?.discard();
  });

  it('a child no call adopts is ended once it has waited the limit, with no discard: it never runs promptless', async () => {
    dir = mkdtempSync(join(tmpdir(), 'relais-prestart-'));
    const pids = join(dir, 'pids');
    const ran = join(dir, 'ran');
    // What Claude Code does once it stops waiting for its stdin: it runs, here leaving a file.
    const spec = notingPid(pids, `cat > /dev/null; echo ran > "${ran}"`);
    // Read before the prestart: the port's timer starts after it, however slow the start is.
    const startedAt = Date.now();
    const early = await prestartProcess(spec);
    const waiting = await startedPid(pids);
    // The port's own timer ends it: nothing here discards it or calls with its spec.
    await early?.ended;
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(1900);
    expect(isAlive(waiting)).toBe(false);
    expect(existsSync(ran)).toBe(false);
    // Nothing waits for that spec any more: a call with it starts its own, and runs.
    const r = await runProcess({ ...spec, stdin: 'fresh' });
    expect(r.exitCode).toBe(0);
    expect(existsSync(ran)).toBe(true);
    expect(readFileSync(pids, 'utf8').trim().split('\n')).toHaveLength(2);
  });

  it('a discard that comes once the timer has begun to end the child waits for that end', async () => {
    dir = mkdtempSync(join(tmpdir(), 'relais-prestart-'));
    const pids = join(dir, 'pids');
    // Only the port's timers are faked (its kill loop waits on node:timers/promises, left real).
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let early: Prestarted | null;
    let waiting: number;
    try {
      early = await prestartProcess(echoing(pids));
      waiting = await startedPid(pids);
      vi.advanceTimersByTime(2000);
    } finally {
      vi.useRealTimers();
    }
    let ended = false;
    void early?.ended.then(() => {
      ended = true;
    });
    await early?.discard();
    expect(ended).toBe(true);
    expect(isAlive(waiting)).toBe(false);
  });

  it('a child that prints past the cap before its call is ended unused: memory stays bounded', async () => {
    dir = mkdtempSync(join(tmpdir(), 'relais-prestart-'));
    const pids = join(dir, 'pids');
    // 2 MiB before reading anything, then its input.
    const spec = notingPid(pids, 'head -c 2097152 /dev/zero; exec cat');
    const early = await prestartProcess(spec);
    await early?.ended;
    const r = await runProcess({ ...spec, stdin: 'input', keepTailBytes: 16 });
    expect(r.exitCode).toBe(0);
    expect(r.stdoutBytes).toBe(2097152 + 'input'.length);
    expect(r.stdoutTail.endsWith('input')).toBe(true);
    // Ended unused, so the call's output is its own child's alone.
    expect(readFileSync(pids, 'utf8').trim().split('\n')).toHaveLength(2);
  });

  it('a program that cannot start is not waiting: the call fails as it always did', async () => {
    dir = mkdtempSync(join(tmpdir(), 'relais-prestart-'));
    const spec: SpawnSpec = { cmd: join(dir, 'missing'), args: [], cwd: dir, env: process.env };
    await prestartProcess(spec);
    const r = await runProcess({ ...spec, stdin: 'x' });
    expect(r.spawnError).toBe('ENOENT');
  });

  it('a call already interrupted adopts nothing, and discarding ends the waiting child', async () => {
    dir = mkdtempSync(join(tmpdir(), 'relais-prestart-'));
    const pidFile = join(dir, 'pid');
    const handle = await prestartProcess(echoing(pidFile));
    const waiting = await startedPid(pidFile);
    const r = await runProcess({ ...echoing(pidFile), stdin: 'x', signal: AbortSignal.abort() });
    expect(r.aborted).toBe(true);
    expect(isAlive(waiting)).toBe(true);
    await handle?.discard();
    expect(isAlive(waiting)).toBe(false);
  });
});
