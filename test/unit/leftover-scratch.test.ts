import { type ChildProcess, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ownerIsGone,
  removeLeftoverScratch,
  scratchPrefix,
} from '../../source/engine/sandbox/leftover-scratch.js';
import { processStartTicks } from '../../source/engine/supervise/process-tree.js';

// Temp folders of killed runners (their agents' scratch HOMEs, login copies included, and scope
// hooks): removed only when their owner is provably gone, never a live runner's, never a link.

const namespace = /^pid:\[(\d+)\]$/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] as string;
const name = (kind: string, ns: string, pid: number, ticks: string) =>
  `relais-${kind}-${ns}.${pid}.${ticks}-AbC123`;

let dir: string;
let children: ChildProcess[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'relais-leftover-'));
});
afterEach(() => {
  for (const child of children) child.kill('SIGKILL');
  children = [];
  rmSync(dir, { recursive: true, force: true });
});

/** A live process (it waits on its stdin) and its start ticks. */
function liveChild(): { pid: number; ticks: string } {
  const child = spawn(process.execPath, ['-e', 'process.stdin.resume()'], {
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  children.push(child);
  const pid = child.pid as number;
  return { pid, ticks: processStartTicks(pid) as string };
}

/** A process that has exited (and been reaped), with the start ticks it had. */
async function deadChild(): Promise<{ pid: number; ticks: string }> {
  const child = spawn(process.execPath, ['-e', 'process.stdin.resume()'], {
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  const pid = child.pid as number;
  const ticks = processStartTicks(pid) as string;
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  return { pid, ticks };
}

function folder(entry: string, withLogin = true): string {
  const path = join(dir, entry);
  mkdirSync(join(path, 'config', '0'), { recursive: true });
  if (withLogin) writeFileSync(join(path, 'config', '0', '.credentials.json'), '{"token":"secret"}');
  return path;
}

describe('scratch folders a killed runner left', () => {
  it('names this runner: its PID namespace, pid and start time', () => {
    expect(scratchPrefix('sandbox')).toBe(
      `relais-sandbox-${namespace}.${process.pid}.${processStartTicks(process.pid)}-`,
    );
    expect(scratchPrefix('scope-hook')).toMatch(/^relais-scope-hook-\d+\.\d+\.\d+-$/);
  });

  it("removes a gone runner's folders, login copy and all", async () => {
    const gone = await deadChild();
    const sandbox = folder(name('sandbox', namespace, gone.pid, gone.ticks));
    const hook = folder(name('scope-hook', namespace, gone.pid, gone.ticks), false);
    expect(removeLeftoverScratch(dir).sort()).toEqual(
      [
        name('sandbox', namespace, gone.pid, gone.ticks),
        name('scope-hook', namespace, gone.pid, gone.ticks),
      ].sort(),
    );
    expect(existsSync(sandbox)).toBe(false);
    expect(existsSync(hook)).toBe(false);
  });

  it("keeps a live runner's folders, and this process's own", () => {
    const live = liveChild();
    const theirs = folder(name('sandbox', namespace, live.pid, live.ticks));
    const own = folder(scratchPrefix('sandbox') + 'XyZ789');
    expect(removeLeftoverScratch(dir)).toEqual([]);
    expect(readFileSync(join(theirs, 'config', '0', '.credentials.json'), 'utf8')).toContain('secret');
    expect(existsSync(own)).toBe(true);
  });

  it('removes a folder whose pid now belongs to another process (another start time)', () => {
    const live = liveChild();
    const reused = folder(name('sandbox', namespace, live.pid, `${Number(live.ticks) - 1}`));
    expect(ownerIsGone(name('sandbox', namespace, live.pid, `${Number(live.ticks) - 1}`))).toBe(true);
    removeLeftoverScratch(dir);
    expect(existsSync(reused)).toBe(false);
  });

  it('keeps what another PID namespace left (its pids mean nothing here), and names it does not make', async () => {
    const gone = await deadChild();
    const other = folder(name('sandbox', `${namespace}1`, gone.pid, gone.ticks));
    const unnamed = folder('relais-sandbox-AbC123');
    const notOurs = folder(`relais-verified-${namespace}.${gone.pid}.${gone.ticks}-AbC123`);
    expect(removeLeftoverScratch(dir)).toEqual([]);
    for (const path of [other, unnamed, notOurs]) expect(existsSync(path)).toBe(true);
  });

  it('never follows a link with a leftover name, nor removes a file', async () => {
    const gone = await deadChild();
    const target = folder('kept-target');
    symlinkSync(target, join(dir, name('sandbox', namespace, gone.pid, gone.ticks)));
    writeFileSync(join(dir, name('scope-hook', namespace, gone.pid, gone.ticks)), 'a file');
    expect(removeLeftoverScratch(dir)).toEqual([]);
    expect(readFileSync(join(target, 'config', '0', '.credentials.json'), 'utf8')).toContain('secret');
    expect(existsSync(join(dir, name('scope-hook', namespace, gone.pid, gone.ticks)))).toBe(true);
  });
});
