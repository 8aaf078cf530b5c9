import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listStaleTmpFiles } from '../../source/engine/workspace/crash-recovery.js';
import { acquireLock, inspectLock } from '../../source/engine/workspace/lock.js';
import { workspacePaths } from '../../source/engine/workspace/paths.js';
import { REPO_ROOT } from '../support/project.js';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const bootId = () => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
const staleLock = () => ({
  pid: 2 ** 22 + 7,
  started_at: new Date().toISOString(),
  boot_id: bootId(),
  hostname: hostname(),
  pid_start_ticks: null,
  command: 'old',
});

/** A separate process that tries to take the lock, says "ok" or "blocked", and holds it until stdin closes. */
function contender(lockPath: string): Promise<{ answer: string; release: () => Promise<void> }> {
  const script = `import('${REPO_ROOT}/dist/engine/workspace/lock.js').then(async ({ acquireLock }) => {
    const r = await acquireLock(process.argv[1], 'contender');
    process.stdout.write(r.ok ? 'ok\\n' : 'blocked\\n');
    process.stdin.on('end', async () => { if (r.ok) await r.lock.release(); process.exit(0); });
    process.stdin.resume();
  });`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, lockPath], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  return new Promise((resolve) => {
    const exited = new Promise<void>((done) => child.on('close', () => done()));
    child.stdout.once('data', (d: Buffer) =>
      resolve({
        answer: d.toString().trim(),
        release: () => {
          child.stdin.end();
          return exited;
        },
      }),
    );
  });
}

describe('the workspace lock', () => {
  it('is exclusive, and released only by its holder', async () => {
    dir = mkdtempSync(join(tmpdir(), 'relais-lock-'));
    const path = join(dir, 'lock.json');
    const first = await acquireLock(path, 'first');
    expect(first.ok).toBe(true);
    const second = await acquireLock(path, 'second');
    expect(second).toMatchObject({
      ok: false,
      detail: expect.stringContaining(`held by running pid ${process.pid}`),
    });
    if (first.ok) await first.lock.release();
    expect((await inspectLock(path)).held).toBe(false);
  });

  it('two runs reclaiming the same stale lock at once: exactly one gets it', async () => {
    dir = mkdtempSync(join(tmpdir(), 'relais-lock-'));
    const path = join(dir, 'lock.json');
    for (let round = 0; round < 8; round++) {
      writeFileSync(path, JSON.stringify(staleLock()));
      const results = await Promise.all([contender(path), contender(path), contender(path)]);
      expect(results.map((r) => r.answer).filter((a) => a === 'ok')).toHaveLength(1);
      await Promise.all(results.map((r) => r.release()));
      expect((await inspectLock(path)).held).toBe(false);
    }
  });

  it('a lock from another host is never reclaimed, whatever its boot id', async () => {
    dir = mkdtempSync(join(tmpdir(), 'relais-lock-'));
    const path = join(dir, 'lock.json');
    writeFileSync(path, JSON.stringify({ ...staleLock(), hostname: 'other-host', boot_id: 'other-boot' }));
    expect(await acquireLock(path, 'me')).toMatchObject({
      ok: false,
      detail: expect.stringContaining('on another host (other-host)'),
    });
  });

  it('crash cleanup never takes the temp file of a run that is acquiring the lock', async () => {
    dir = mkdtempSync(join(tmpdir(), 'relais-lock-'));
    const paths = workspacePaths(dir, 'ws');
    rmSync(paths.dir, { recursive: true, force: true });
    mkdirSync(paths.dir, { recursive: true });
    writeFileSync(join(paths.dir, 'lock.json.123.abcdef.tmp'), '{}');
    writeFileSync(join(paths.dir, 'STATE.json.123.abcdef.tmp'), '{}');
    expect((await listStaleTmpFiles(paths)).map((p) => p.slice(paths.dir.length + 1))).toEqual([
      'STATE.json.123.abcdef.tmp',
    ]);
  });
});
