import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireLock } from '../../source/engine/workspace/lock.js';
import { REPO_ROOT } from '../support/project.js';

// Issue 14: "two runs reclaiming the same stale lock at once" once ended with both holding it.
// Here many separate processes race for one stale lock, round after round, and exactly one may win.

const CONTENDERS = 8;
const ROUNDS = 40;

let dir: string;
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** A long-lived contender: on "go" it tries the lock and answers ok/blocked; on "release" it lets go. */
const SCRIPT = `import('${REPO_ROOT}/dist/engine/workspace/lock.js').then(({ acquireLock }) => {
  const rl = require('node:readline').createInterface({ input: process.stdin });
  let held = null;
  rl.on('line', async (line) => {
    if (line === 'go') {
      const r = await acquireLock(process.argv[1], 'contender');
      held = r.ok ? r.lock : null;
      process.stdout.write(r.ok ? 'ok\\n' : 'blocked\\n');
    } else if (line === 'release') {
      if (held) await held.release();
      held = null;
      process.stdout.write('released\\n');
    }
  });
  process.stdout.write('ready\\n');
});`;

interface Contender {
  readonly pid: number;
  say(line: string): Promise<string>;
}

function startContender(lockPath: string): Contender {
  const child = spawn(process.execPath, ['--input-type=commonjs', '-e', SCRIPT, lockPath], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  children.push(child);
  const answers: string[] = [];
  const waiting: Array<(answer: string) => void> = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    const next = waiting.shift();
    if (next) next(line);
    else answers.push(line);
  });
  const nextAnswer = () =>
    new Promise<string>((resolve) => {
      const ready = answers.shift();
      if (ready !== undefined) resolve(ready);
      else waiting.push(resolve);
    });
  return {
    pid: child.pid as number,
    say(line: string) {
      const answer = nextAnswer();
      if (line) child.stdin.write(`${line}\n`);
      return answer;
    },
  };
}

const staleLock = (n: number) =>
  JSON.stringify({
    pid: 2 ** 22 + n,
    started_at: new Date(Date.UTC(2020, 0, 1, 0, 0, n % 60)).toISOString(),
    boot_id: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
    hostname: hostname(),
    pid_start_ticks: null,
    command: `dead run ${n}`,
  });

describe('the workspace lock under load', () => {
  it(`${CONTENDERS} processes reclaiming one stale lock, ${ROUNDS} rounds: exactly one holds it each time`, async () => {
    dir = mkdtempSync(join(tmpdir(), 'relais-lock-race-'));
    const path = join(dir, 'lock.json');
    const contenders = Array.from({ length: CONTENDERS }, () => startContender(path));
    expect(await Promise.all(contenders.map((c) => c.say('')))).toEqual(Array(CONTENDERS).fill('ready'));
    const winners: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      writeFileSync(path, staleLock(round));
      const answers = await Promise.all(contenders.map((c) => c.say('go')));
      const holders = contenders.filter((_, i) => answers[i] === 'ok');
      expect(holders, `round ${round}: ${answers.join(',')}`).toHaveLength(1);
      // The one that says it holds the lock is the one the file names.
      expect(JSON.parse(readFileSync(path, 'utf8')).pid).toBe(holders[0]?.pid);
      winners.push(contenders.indexOf(holders[0] as Contender));
      expect(await Promise.all(contenders.map((c) => c.say('release')))).toEqual(
        Array(CONTENDERS).fill('released'),
      );
    }
    // Reclaim tokens are never left behind by a run that finished.
    expect(readdirSync(dir)).toEqual([]);
    expect(winners).toHaveLength(ROUNDS);
  }, 120_000);

  it('a reclaim token left by a reclaimer that died does not block the lock forever', async () => {
    dir = mkdtempSync(join(tmpdir(), 'relais-lock-race-'));
    const path = join(dir, 'lock.json');
    const stale = staleLock(1);
    writeFileSync(path, stale);
    const hash = createHash('sha256').update(stale).digest('hex').slice(0, 16);
    writeFileSync(`${path}.reclaim-${hash}`, staleLock(2));
    const attempt = await acquireLock(path, 'me');
    expect(attempt).toMatchObject({ ok: true, reclaimed: { pid: 2 ** 22 + 1 } });
    expect(JSON.parse(readFileSync(path, 'utf8')).pid).toBe(process.pid);
    if (attempt.ok) await attempt.lock.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a reclaim token held by a live run makes the others back off', async () => {
    dir = mkdtempSync(join(tmpdir(), 'relais-lock-race-'));
    const path = join(dir, 'lock.json');
    const stale = staleLock(3);
    writeFileSync(path, stale);
    const hash = createHash('sha256').update(stale).digest('hex').slice(0, 16);
    const live = JSON.parse(staleLock(4));
    live.pid = process.pid;
    live.pid_start_ticks = null;
    writeFileSync(`${path}.reclaim-${hash}`, JSON.stringify(live));
    expect(await acquireLock(path, 'me')).toMatchObject({
      ok: false,
      detail: 'another run reclaimed the stale lock first',
    });
    expect(readFileSync(path, 'utf8')).toBe(stale);
  });
});
