import { describe, expect, it } from 'vitest';
import type { AgentOutcome, AgentRequest, AgentRunner } from '../../source/engine/agents/agent-run.js';
import { supervisedCycleRunners } from '../../source/engine/cycle/supervision.js';
import { EngineBus, type StampedEvent } from '../../source/engine/events.js';
import { configSchema } from '../../source/engine/protocol/config.js';
import { toolCpuTicks } from '../../source/engine/supervise/process-tree.js';
import { runProcess } from '../../source/engine/supervise/run-process.js';
import { FakeClock } from '../support/fake-clock.js';

// Issue 15: silence while a tool call is in flight and the agent's process tree is alive and busy
// (a long test run) is not inactivity, in `relais cycle` too; an idle silent tree still is.

/** An "agent" whose tool child either spins (busy) or sleeps, silent on stdout either way. */
function agentWithTool(busy: boolean, drive: (pgid: number) => Promise<void>): AgentRunner {
  const tool = busy ? 'for(;;){}' : 'setInterval(() => undefined, 1000)';
  const script = `require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(tool)}], { stdio: 'ignore' }); setInterval(() => undefined, 1000);`;
  return {
    async run(request: AgentRequest): Promise<AgentOutcome> {
      let driven: Promise<void> = Promise.resolve();
      const process_ = await runProcess({
        cmd: process.execPath,
        args: ['-e', script],
        cwd: process.cwd(),
        env: process.env,
        signal: request.signal,
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

async function superviseFor70s(busy: boolean) {
  const clock = new FakeClock();
  const events: StampedEvent[] = [];
  const bus = new EngineBus();
  bus.subscribe((e) => events.push(e));
  const controller = new AbortController();
  const inner = agentWithTool(busy, async (pgid) => {
    let ticks = -1;
    // Seven evidence looks (every 10 s) over 70 s of the fake clock: past the 60 s threshold.
    for (let look = 0; look < 7 && !controller.signal.aborted; look++) {
      if (busy) ticks = await cpuMovedPast(pgid, ticks);
      else await new Promise((resolve) => setImmediate(resolve));
      clock.advance(10_000);
      await new Promise((resolve) => setImmediate(resolve));
    }
    controller.abort();
  });
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
    expect(await superviseFor70s(true)).toEqual([]);
  });

  it('70 s of silence with an idle tree opens the breaker on inactivity', async () => {
    expect(await superviseFor70s(false)).toEqual(['inactivity']);
  });
});
