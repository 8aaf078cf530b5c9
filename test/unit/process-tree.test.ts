import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { groupHasMembers, isAlive } from '../../source/engine/supervise/process-tree.js';

// Issue 17: a zombie (exited, not yet reaped by a slow init) is not a running process. kill(0)
// still reaches it, which made every unsandboxed start wait out its kill grace period.

const holders: Array<{ kill(): void }> = [];
afterEach(() => {
  for (const h of holders.splice(0)) h.kill();
});

/**
 * A process that exits at once in a group of its own, and a parent that never reaps it. The parent
 * is perl (Debian's perl-base is essential, and git needs it), not a shell: a shell may reap its
 * background job before it execs, and then there is no zombie to look at (CI saw ENOENT once).
 */
async function zombieGroup(): Promise<number> {
  const script = 'my $p = fork; if ($p == 0) { setpgrp(0, 0); exit 0 } $| = 1; print "$p\\n"; sleep 30';
  const parent = spawn('perl', ['-e', script], { stdio: ['ignore', 'pipe', 'ignore'] });
  holders.push(parent);
  const pid = await new Promise<number>((resolve, reject) => {
    parent.once('error', reject); // no perl: say so, rather than wait out the test's timeout
    parent.stdout.once('data', (d) => resolve(Number(String(d).trim())));
  });
  const state = () => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
  // No event says "became a zombie" (short of a pidfd): poll the kernel's state, bounded generously.
  const deadline = performance.now() + 10_000;
  while (state() !== 'Z' && performance.now() < deadline) await new Promise((r) => setImmediate(r));
  expect(state()).toBe('Z');
  return pid;
}

describe('process groups and zombies', () => {
  it('a group whose only member is a zombie has no members, and the zombie is not alive', async () => {
    const pid = await zombieGroup();
    expect(() => process.kill(-pid, 0)).not.toThrow(); // what the old check trusted
    expect(groupHasMembers(pid)).toBe(false);
    expect(isAlive(pid)).toBe(false);
  });

  it('a group with a running member has members, and it is alive', () => {
    const child = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    holders.push(child);
    expect(groupHasMembers(child.pid as number)).toBe(true);
    expect(isAlive(child.pid as number)).toBe(true);
  });
});
