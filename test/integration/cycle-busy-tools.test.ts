import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { AgentOutcome, AgentRequest, AgentRunner } from '../../source/engine/agents/agent-run.js';
import { supervisedCycleRunners } from '../../source/engine/cycle/supervision.js';
import { EngineBus, type StampedEvent } from '../../source/engine/events.js';
import { configSchema } from '../../source/engine/protocol/config.js';
import type { SandboxPolicy } from '../../source/engine/sandbox/policy.js';
import { agentSandbox, resolveSandbox } from '../../source/engine/sandbox/sandbox.js';
import { agentTree, toolCpuTicks } from '../../source/engine/supervise/process-tree.js';
import { runProcess } from '../../source/engine/supervise/run-process.js';
import { FakeClock } from '../support/fake-clock.js';

// Issue 15: silence while a tool call is in flight and the agent's process tree is alive and busy
// (a long test run) is not inactivity, in `relais cycle` too; an idle silent tree still is.

type Busy = 'tool' | 'idle' | 'agent itself';

/**
 * An "agent" with one tool child, silent on stdout: the tool spins (busy), or nothing does, or
 * the agent process itself spins while its tool sleeps.
 */
function agentWithTool(
  busy: Busy,
  drive: (pgid: number) => Promise<void>,
  sandbox?: SandboxPolicy,
): AgentRunner {
  const tool = busy === 'tool' ? 'for(;;){}' : 'setInterval(() => undefined, 1000)';
  const own = busy === 'agent itself' ? 'for(;;){}' : 'setInterval(() => undefined, 1000);';
  const script = `require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(tool)}], { stdio: 'ignore' }); ${own}`;
  return {
    async run(request: AgentRequest): Promise<AgentOutcome> {
      let driven: Promise<void> = Promise.resolve();
      const process_ = await runProcess({
        cmd: process.execPath,
        args: ['-e', script],
        cwd: process.cwd(),
        env: process.env,
        signal: request.signal,
        sandbox,
        onSpawn: (pgid) => {
          request.onSpawn?.(pgid);
          driven = drive(pgid);
        },
      });
      await driven;
      return {
        text: 'done',
        failure: null,
        costUsd: 0,
        costReported: true,
        errorText: null,
        apiErrorStatus: null,
        permissionDenials: [],
        numTurns: 1,
        process: process_,
      };
    },
  };
}

async function cpuMovedPast(pgid: number, ticks: number): Promise<number> {
  for (;;) {
    const now = toolCpuTicks(pgid);
    if (now > ticks) return now;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The agent process's own CPU time, past `ticks` (it is really at work), once it has started. */
async function agentCpuPast(pgid: number, ticks: number): Promise<number> {
  for (;;) {
    // The breaker ended the run (the sandbox is gone): nothing more to wait for.
    if (!existsSync(`/proc/${pgid}`)) return ticks;
    const agent = agentTree(pgid).agent;
    try {
      // Until bwrap has started the agent, its own processes are all there is.
      if (readFileSync(`/proc/${agent}/comm`, 'utf8').trim() !== 'bwrap') {
        const stat = readFileSync(`/proc/${agent}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const now = Number(fields[11]) + Number(fields[12]);
        if (now > ticks) return now;
      }
    } catch {
      // A process of bwrap's start-up, gone meanwhile: look again.
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}

async function superviseFor70s(busy: Busy, sandbox?: SandboxPolicy) {
  const clock = new FakeClock();
  const events: StampedEvent[] = [];
  const bus = new EngineBus();
  bus.subscribe((e) => events.push(e));
  const controller = new AbortController();
  const inner = agentWithTool(
    busy,
    async (pgid) => {
      let ticks = -1;
      // Seven evidence looks (every 10 s) over 70 s of the fake clock: past the 60 s threshold.
      for (let look = 0; look < 7 && !controller.signal.aborted; look++) {
        if (busy === 'tool') ticks = await cpuMovedPast(pgid, ticks);
        else if (busy === 'agent itself') ticks = await agentCpuPast(pgid, ticks);
        else await new Promise((resolve) => setImmediate(resolve));
        clock.advance(10_000);
        await new Promise((resolve) => setImmediate(resolve));
      }
      controller.abort();
    },
    sandbox,
  );
  const config = configSchema.parse({ circuit_breaker: { inactivity_timeout: 60, max_attempts: 1 } });
  const runners = supervisedCycleRunners(
    { planner: inner, implementer: inner, verifier: inner },
    config,
    bus,
    clock,
  );
  const request = {
    role: 'builder',
    attempt: 1,
    systemPrompt: 's',
    userPrompt: 'u',
    model: 'm',
    fallbackModel: null,
    maxTurns: 1,
    maxBudgetUsd: 1,
    tools: [],
    permissionMode: 'bypassPermissions',
    streaming: true,
    cwd: process.cwd(),
    timeoutMs: 60_000,
    signal: controller.signal,
  } as const;
  await runners.implementer.run({ ...request, tools: [...request.tools] }, bus);
  return events.filter((e) => e.type === 'breaker.changed').map((e: any) => e.trigger);
}

describe('relais cycle: a busy tool is no inactivity', () => {
  it('70 s of silence while the tool child burns CPU opens nothing', async () => {
    expect(await superviseFor70s('tool')).toEqual([]);
  });

  it('70 s of silence with an idle tree opens the breaker on inactivity', async () => {
    expect(await superviseFor70s('idle')).toEqual(['inactivity']);
  });
});

// In the sandbox the recorded process-group leader is bwrap, and bwrap's child is bwrap again (the
// init of its PID namespace): the agent is a grandchild. Its own CPU must not count as its tools'.
describe('relais cycle in the sandbox: the agent process is not its own tool', () => {
  async function sandbox(): Promise<SandboxPolicy | undefined> {
    const resolved = await resolveSandbox(configSchema.parse({}), process.cwd(), process.env);
    expect(resolved.kind).toBe('bwrap');
    return agentSandbox(resolved, []);
  }

  it('a tool burning CPU inside the sandbox opens nothing', async () => {
    expect(await superviseFor70s('tool', await sandbox())).toEqual([]);
  });

  it('an agent that burns CPU itself, its tool idle, is silent: inactivity', async () => {
    expect(await superviseFor70s('agent itself', await sandbox())).toEqual(['inactivity']);
  });

  it('an idle sandbox opens the breaker on inactivity', async () => {
    expect(await superviseFor70s('idle', await sandbox())).toEqual(['inactivity']);
  });
});
