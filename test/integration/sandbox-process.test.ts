import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../source/engine/protocol/config.js';
import {
  agentSandbox,
  resolveSandbox,
  type Sandbox,
  verificationSandbox,
} from '../../source/engine/sandbox/sandbox.js';
import { groupHasMembers } from '../../source/engine/supervise/process-tree.js';
import { runProcess } from '../../source/engine/supervise/run-process.js';

// The sandbox for real: bubblewrap around real child processes (issue 14). Each attack runs
// inside, and the host is checked afterwards.

let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

async function repo(): Promise<{ root: string; sandbox: Sandbox }> {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'relais-sbx-')));
  const root = join(dir, 'repo');
  for (const d of ['src', 'docs', '.git/hooks', 'relais']) mkdirSync(join(root, d), { recursive: true });
  writeFileSync(join(root, 'README.md'), 'original\n');
  writeFileSync(join(dir, 'outside.txt'), 'outside\n');
  const sandbox = await resolveSandbox(configSchema.parse({}), root, process.env);
  expect(sandbox.kind).toBe('bwrap');
  return { root, sandbox };
}

const node = (root: string, code: string) => ({
  cmd: process.execPath,
  args: ['-e', code],
  cwd: root,
  env: process.env,
});

/** Runs `code` with node in the builder's sandbox for a task allowed to write `src/**`. */
async function inScope(root: string, sandbox: Sandbox, code: string) {
  return runProcess({ ...node(root, code), sandbox: agentSandbox(sandbox, ['src/**']) });
}

describe('bubblewrap sandbox around a process', () => {
  it('writes land inside the allowed folders only: the rest, .git and the workspace are read-only', async () => {
    const { root, sandbox } = await repo();
    const r = await inScope(
      root,
      sandbox,
      `const fs = require('fs');
       const tryWrite = (p) => { try { fs.writeFileSync(p, 'x'); return 'written'; } catch (e) { return e.code; } };
       console.log(JSON.stringify({
         src: tryWrite('src/a.ts'),
         readme: tryWrite('README.md'),
         hook: tryWrite('.git/hooks/pre-commit'),
         workspace: tryWrite('relais/STATE.json'),
         outside: tryWrite(${JSON.stringify(join(dir, 'outside.txt'))}),
         home: tryWrite(require('os').homedir() + '/x'),
         tmp: tryWrite(require('os').tmpdir() + '/x'),
       }));`,
    );
    expect(JSON.parse(r.stdoutTail)).toEqual({
      src: 'written',
      readme: 'EROFS',
      hook: 'EROFS',
      workspace: 'EROFS',
      outside: 'EROFS',
      home: 'written',
      tmp: 'written',
    });
    expect(readFileSync(join(root, 'README.md'), 'utf8')).toBe('original\n');
    expect(existsSync(join(root, '.git/hooks/pre-commit'))).toBe(false);
    expect(readFileSync(join(root, 'src/a.ts'), 'utf8')).toBe('x');
  });

  it('a hard link from an allowed path to a file outside it fails (EXDEV)', async () => {
    const { root, sandbox } = await repo();
    const r = await inScope(
      root,
      sandbox,
      `const fs = require('fs');
       for (const target of ['README.md', ${JSON.stringify(join(dir, 'outside.txt'))}])
         try { fs.linkSync(target, 'src/link-' + target.length); console.log('linked'); } catch (e) { console.log(e.code); }`,
    );
    expect(r.stdoutTail.trim().split('\n')).toEqual(['EXDEV', 'EXDEV']);
    expect(readdirSync(join(root, 'src'))).toEqual([]);
  });

  it('a setsid daemon dies with the sandbox: nothing it planned happens after the process ends', async () => {
    const { root, sandbox } = await repo();
    const marker = join(root, 'src', 'daemon-started');
    // The daemon writes a marker once it runs, waits for the parent to be gone, then edits in scope.
    const daemon = `const fs = require('fs'); fs.writeFileSync(${JSON.stringify(marker)}, String(process.pid));
      setInterval(() => { try { process.kill(PARENT, 0); } catch { setTimeout(() => fs.writeFileSync(${JSON.stringify(join(root, 'src', 'late.ts'))}, 'late'), 200); } }, 20);`;
    const r = await inScope(
      root,
      sandbox,
      `const { spawn } = require('child_process'); const fs = require('fs');
       const parent = process.pid;
       const code = ${JSON.stringify(daemon)}.replace('PARENT', String(parent));
       spawn('setsid', [process.execPath, '-e', code], { stdio: 'ignore', detached: true }).unref();
       const wait = setInterval(() => { if (fs.existsSync(${JSON.stringify(marker)})) { clearInterval(wait); console.log('daemon up'); } }, 10);`,
    );
    expect(r.stdoutTail.trim()).toBe('daemon up');
    // The namespace's init is gone, so the kernel killed the daemon with it: no process of the
    // sandbox is left on the host, and the late edit never happened (checked after a second run
    // of the same sandbox, which proves time passed with the daemon's polling interval).
    const host = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
    const survivors = host.filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false;
      }
    });
    expect(survivors).toEqual([]);
    expect(existsSync(join(root, 'src', 'late.ts'))).toBe(false);
  });

  // bwrap killed before its namespace's init armed --die-with-parent leaves that init and all it
  // runs alive, re-parented to the host's init, carrying the call's mark; after a clean exit the
  // init still lives a moment (bwrap returns once it has the command's status). The same state,
  // made on purpose: a host process with the call's mark, started once bwrap exists; `then` runs
  // when it is up. Resolves with the signal that ended it.
  function markedLeftover(bwrapPid: number, then: () => void): () => Promise<NodeJS.Signals | null> {
    const mark = readFileSync(`/proc/${bwrapPid}/environ`, 'utf8')
      .split('\0')
      .find((entry) => entry.startsWith('RELAIS_PROCESS_MARK='));
    expect(mark).toBeDefined();
    const leftover = spawn(process.execPath, ['-e', 'setInterval(() => undefined, 1000)'], {
      env: { ...process.env, RELAIS_PROCESS_MARK: mark?.split('=')[1] ?? '' },
      stdio: 'ignore',
    });
    leftover.once('spawn', then);
    return () =>
      new Promise((resolve) => {
        if (leftover.exitCode !== null || leftover.signalCode !== null) resolve(leftover.signalCode);
        else leftover.once('exit', (_code, signal) => resolve(signal));
      });
  }

  it("a process left with the call's mark (an init that missed bwrap's death) is ended before the call returns", async () => {
    const { root, sandbox } = await repo();
    const cancel = new AbortController();
    let ended: (() => Promise<NodeJS.Signals | null>) | null = null;
    const r = await runProcess({
      ...node(root, 'setInterval(() => undefined, 1000);'),
      sandbox: agentSandbox(sandbox, ['src/**']),
      signal: cancel.signal,
      // Cancelled once the leftover is up, so bwrap is killed: the way that state comes about.
      onSpawn: (pid) => {
        ended = markedLeftover(pid, () => cancel.abort());
      },
    });
    expect(r.aborted).toBe(true);
    // Already dead when runProcess returned: its exit is the SIGKILL the call's end sent.
    expect(await (ended as (() => Promise<NodeJS.Signals | null>) | null)?.()).toBe('SIGKILL');
  });

  it("a process left with the call's mark is ended before the call returns, after a clean exit too", async () => {
    const { root, sandbox } = await repo();
    const go = join(root, 'src', 'go');
    let ended: (() => Promise<NodeJS.Signals | null>) | null = null;
    const r = await runProcess({
      ...node(
        root,
        `const wait = setInterval(() => { if (require('fs').existsSync(${JSON.stringify(go)})) clearInterval(wait); }, 10);`,
      ),
      sandbox: agentSandbox(sandbox, ['src/**']),
      onSpawn: (pid) => {
        ended = markedLeftover(pid, () => writeFileSync(go, ''));
      },
    });
    expect(r.exitCode).toBe(0);
    expect(await (ended as (() => Promise<NodeJS.Signals | null>) | null)?.()).toBe('SIGKILL');
  });

  it('verification has no network by default; agents keep the host network', async () => {
    const { root, sandbox } = await repo();
    const interfaces = `console.log(Object.keys(require('os').networkInterfaces()).sort().join(','))`;
    const verify = await runProcess({ ...node(root, interfaces), sandbox: verificationSandbox(sandbox) });
    const agent = await runProcess({ ...node(root, interfaces), sandbox: agentSandbox(sandbox) });
    expect(verify.stdoutTail.trim()).toBe('lo');
    expect(agent.stdoutTail.trim().split(',').length).toBeGreaterThanOrEqual(
      verify.stdoutTail.trim().split(',').length,
    );
    expect(agent.exitCode).toBe(0);
  });

  it('runs in its own PID namespace with a private HOME that is gone afterwards', async () => {
    const { root, sandbox } = await repo();
    const r = await inScope(root, sandbox, `console.log(process.pid, require('os').homedir())`);
    const [pid, home] = r.stdoutTail.trim().split(' ');
    expect(Number(pid)).toBeLessThan(10);
    expect(home).toMatch(/relais-sandbox-[^/]+\/home$/);
    expect(existsSync(home as string)).toBe(false);
  });

  it('a program missing inside the sandbox is the same ENOENT value as outside', async () => {
    const { root, sandbox } = await repo();
    const r = await runProcess({
      cmd: 'no-such-program-here',
      args: [],
      cwd: root,
      env: process.env,
      sandbox: agentSandbox(sandbox),
    });
    expect(r.spawnError).toBe('ENOENT');
  });

  it('a timeout ends the whole sandbox, even a child that ignores SIGTERM in a group of its own', async () => {
    const { root, sandbox } = await repo();
    const pidFile = join(root, 'src', 'pids');
    const seconds = `300.${process.pid}${Date.now() % 100000}`;
    const sleepersNow = () =>
      readdirSync('/proc')
        .filter((p) => /^\d+$/.test(p))
        .filter((pid) => {
          try {
            return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(`sleep\u0000${seconds}\u0000`);
          } catch {
            return false;
          }
        });
    let whileRunning: string[] = [];
    const r = await runProcess({
      ...node(
        root,
        `process.on('SIGTERM', () => {});
         const c = require('child_process').spawn('setsid', ['sleep', '${seconds}'], { stdio: 'ignore' });
         require('fs').writeFileSync(${JSON.stringify(pidFile)}, 'up'); console.log('ready'); setInterval(() => {}, 1000);`,
      ),
      sandbox: agentSandbox(sandbox, ['src/**']),
      // Long enough for node to start inside bwrap and say so on a loaded machine.
      timeoutMs: 8000,
      killGraceMs: 200,
      onStdoutLine: (line) => {
        if (line === 'ready') whileRunning = sleepersNow();
      },
    });
    expect(r.timedOut).toBe(true);
    expect(r.stdoutTail.trim()).toBe('ready');
    expect(whileRunning).toHaveLength(1);
    expect(sleepersNow()).toEqual([]);
  });

  it('the zombie a bwrap leaves in its process group does not count as a member (the probe every run makes ended only after the kill grace)', async () => {
    // bwrap's PID-namespace init outlives bwrap as a zombie in its process group; an init that
    // reaps slowly (a container's) kept it there, and the group looked alive for the whole grace.
    const child = spawn(
      'bwrap',
      [
        '--ro-bind',
        '/',
        '/',
        '--dev',
        '/dev',
        '--proc',
        '/proc',
        '--unshare-pid',
        '--die-with-parent',
        '--',
        'true',
      ],
      { detached: true, stdio: 'ignore' },
    );
    await new Promise((resolve) => child.on('exit', resolve));
    const pgid = child.pid as number;
    const membersOf = () =>
      readdirSync('/proc')
        .filter((p) => /^\d+$/.test(p))
        .map((p) => {
          try {
            const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
            return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
          } catch {
            return null;
          }
        })
        .filter((f): f is string[] => f !== null && Number(f[2]) === pgid);
    // The init is still on its way out for a moment after bwrap ended (long on a loaded host):
    // polled, bounded, until only zombies are left, when any (a host whose init reaps at once
    // has none by now).
    const deadline = Date.now() + 10_000;
    while (membersOf().some((f) => f[0] !== 'Z') && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    const members = membersOf();
    expect(
      members.every((f) => f[0] === 'Z'),
      JSON.stringify(members.map((f) => f[0])),
    ).toBe(true);
    expect(groupHasMembers(pgid)).toBe(false);
  });
});
