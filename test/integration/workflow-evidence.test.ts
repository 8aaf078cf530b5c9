import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { Git } from '../../source/engine/judge/git.js';
import { configSchema } from '../../source/engine/protocol/config.js';
import { agentSandbox, resolveSandbox } from '../../source/engine/sandbox/sandbox.js';
import { CircuitBreaker } from '../../source/engine/supervise/circuit-breaker.js';
import { agentTree } from '../../source/engine/supervise/process-tree.js';
import { runProcess } from '../../source/engine/supervise/run-process.js';
import type { WorkflowContext } from '../../source/engine/workflow/context.js';
import { evidenceWatcher, toolCpuTicks } from '../../source/engine/workflow/evidence.js';
import { FakeClock } from '../support/fake-clock.js';
import { TestProject } from '../support/project.js';

// Issue 4: progress is judged from evidence by comparing snapshots, never from "is the tree
// dirty". Real repositories and real processes; the breaker runs on a fake clock.

let project: TestProject | null = null;
let child: ChildProcess | null = null;
afterEach(() => {
  if (child?.pid) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  child = null;
  project?.dispose();
  project = null;
});

function setup() {
  project = TestProject.create({ 'src/a.ts': 'export const a = 1;\n' });
  const clock = new FakeClock();
  const breaker = new CircuitBreaker(
    {
      inactivityMs: 60_000,
      maxRepeatedErrors: 3,
      stagnationMs: 600_000,
      maxOutputBytes: 1 << 20,
      maxAttempts: 3,
      testCommand: null,
      testInactivityMs: 300_000,
    },
    () => clock.now(),
  );
  const git = new Git(project.root, project.env);
  // The watcher reads only the repository: a context with the root and the runner's git.
  const ctx = { setup: { git, facts: { root: project.root } } } as unknown as WorkflowContext;
  return { project, clock, breaker, watch: evidenceWatcher(ctx, breaker) };
}

describe('evidence of progress', () => {
  it('an agent that commits on its own is not stuck, though its tree stays clean', async () => {
    const { project, clock, breaker, watch } = setup();
    await watch(null);
    clock.advance(50_000);
    project.write('src/a.ts', 'export const a = 2;\n');
    project.git('commit', '-qam', 'agent commit');
    expect(project.status()).toBe('');
    await watch(null);
    clock.advance(50_000);
    expect(breaker.check()).toBeNull();
    clock.advance(10_000);
    await watch(null);
    expect(breaker.check()).toMatchObject({ trigger: 'inactivity' });
  });

  it('a tree that was dirty before and stays the same is no progress', async () => {
    const { project, clock, breaker, watch } = setup();
    project.write('src/a.ts', 'dirty before the phase\n');
    await watch(null);
    clock.advance(30_000);
    await watch(null);
    clock.advance(30_000);
    await watch(null);
    expect(breaker.check()).toMatchObject({ trigger: 'inactivity' });
  });

  it('a task newly completed in TASKS.md resets stagnation', async () => {
    const { project, clock, breaker, watch } = setup();
    project.write('specs/TASKS.md', '## Task 1: A\n- **Status**: pending\n');
    await watch(null);
    clock.advance(590_000);
    project.write('specs/TASKS.md', '## Task 1: A\n- **Status**: completed\n');
    await watch(null);
    clock.advance(20_000);
    // Not 600 s since the last completion: no stagnation (inactivity was reset too).
    expect(breaker.check()).toBeNull();
  });

  it('a quiet tool process that uses CPU is work, though the agent prints nothing', async () => {
    const { clock, breaker, watch } = setup();
    // The "agent" (a process group leader) runs one tool: a child that burns CPU without printing
    // to the agent's output. It says on its own stdout (a pipe to this test) when it has worked.
    child = spawn(
      process.execPath,
      [
        '-e',
        `require('node:child_process').spawn(process.execPath, ['-e', "const t=Date.now(); while (Date.now()-t < 300) {} console.log('burned'); for(;;){}"], { stdio: 'inherit' }); setInterval(() => {}, 1000);`,
      ],
      { detached: true, stdio: ['ignore', 'pipe', 'ignore'] },
    );
    const pgid = child.pid as number;
    const burned = new Promise<void>((resolve) => {
      child?.stdout?.on('data', (d: Buffer) => {
        if (d.toString().includes('burned')) resolve();
      });
    });
    await watch(pgid);
    const before = toolCpuTicks(pgid);
    await burned;
    expect(toolCpuTicks(pgid)).toBeGreaterThan(before);
    clock.advance(50_000);
    await watch(pgid);
    clock.advance(50_000);
    expect(breaker.check()).toBeNull();
  });

  it('in the sandbox, the agent burning CPU itself is not its tools at work (bwrap leads the group)', async () => {
    const { clock, breaker, watch } = setup();
    const resolved = await resolveSandbox(configSchema.parse({}), project?.root ?? '', process.env);
    expect(resolved.kind).toBe('bwrap');
    const stop = new AbortController();
    let pgid = 0;
    const started = new Promise<void>((resolve) => {
      void runProcess({
        cmd: process.execPath,
        args: ['-e', 'for(;;){}'],
        cwd: project?.root ?? '',
        env: process.env,
        signal: stop.signal,
        sandbox: agentSandbox(resolved, []),
        onSpawn: (pid) => {
          pgid = pid;
          resolve();
        },
      });
    });
    await started;
    try {
      // The agent itself (not bwrap) is at work: its own CPU time moves between the two looks.
      const agentTicks = () => {
        try {
          const { agent } = agentTree(pgid);
          const stat = readFileSync(`/proc/${agent}/stat`, 'utf8');
          const comm = readFileSync(`/proc/${agent}/comm`, 'utf8').trim();
          const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
          return comm === 'bwrap' ? -1 : Number(fields[11]) + Number(fields[12]);
        } catch {
          return -1;
        }
      };
      while (agentTicks() < 0) await new Promise((resolve) => setImmediate(resolve));
      await watch(pgid);
      const first = agentTicks();
      while (agentTicks() <= first) await new Promise((resolve) => setImmediate(resolve));
      clock.advance(70_000);
      await watch(pgid);
      expect(toolCpuTicks(pgid)).toBe(0);
      expect(breaker.check()).toMatchObject({ trigger: 'inactivity' });
    } finally {
      stop.abort();
    }
  });
});
