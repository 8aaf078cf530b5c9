import type { EngineBus } from '../events.js';
import type { RunTotals } from '../workspace/ledger.js';
import { runTickWaitingOutLimits } from './limit-waits.js';
import { reportInterruption, type TickOptions, type TickResult } from './run-tick.js';

/**
 * `relais loop` (seed 001 PR2): ticks until something says stop. Preflight runs before every tick
 * (inside runTick), with the run-wide caps of this loop on top of the per-milestone ones.
 *
 * Stops on: a stop or blocked verdict; a control stop (success); the budget warning (a soft stop,
 * after the tick that crossed it); --max-ticks reached; an interrupt; and in milestone mode, a
 * task for another milestone (the tick stops before building). Autonomous mode lets milestones
 * change: the finished milestone's ledger is archived and the next starts with fresh counters,
 * while the run-wide caps keep holding.
 */

export type LoopMode = 'milestone' | 'autonomous';

export interface LoopOptions extends Omit<TickOptions, 'holdMilestone' | 'runCaps' | 'command'> {
  readonly mode: LoopMode;
  readonly maxTicks: number | null;
}

export type LoopExit = 'success' | 'stop' | 'blocked' | 'interrupted';

export interface LoopResult {
  readonly exit: LoopExit;
  readonly reason: string;
  readonly ticks: number;
  readonly totals: RunTotals;
}

export async function runLoop(options: LoopOptions): Promise<LoopResult> {
  const totals: RunTotals = { ticks: 0, calls: 0, costUsd: 0 };
  // The part of totals.costUsd held for calls that never reported a cost (shown apart).
  const held = { usd: 0, calls: 0 };
  const verdicts: Record<string, number> = {};
  let ticks = 0;
  const end = (exit: LoopExit, reason: string): LoopResult => {
    announce(options.bus, options.mode, ticks, verdicts, { ...totals, held }, exit, reason);
    return { exit, reason, ticks, totals };
  };
  for (;;) {
    if (options.signal.aborted) {
      await reportInterruption(
        { ...options, command: 'loop' },
        'interrupted between ticks of relais loop; nothing was running',
      );
      return end('interrupted', 'interrupted between ticks');
    }
    if (options.maxTicks !== null && ticks >= options.maxTicks)
      return end('success', `--max-ticks ${options.maxTicks} reached`);
    // A usage limit is waited out inside (issue 15): never a stop of the loop.
    const result = await runTickWaitingOutLimits({
      ...options,
      command: 'loop',
      // Milestone mode holds to the ledger's milestone (a fresh ledger adopts the first task's).
      holdMilestone: options.mode === 'milestone',
      runCaps: { totals: { ...totals }, maxTicks: options.maxTicks },
    });
    // A tick refused before it started (preflight, the lock) is no tick: it ends the loop, named.
    if (!result.started)
      return end(refusedExit(result), `refused before tick ${ticks + 1} started: ${result.code}`);
    ticks++;
    totals.ticks += result.spent.ticks;
    totals.calls += result.spent.calls;
    totals.costUsd += result.spent.costUsd;
    held.usd += result.spent.unreportedUsd;
    held.calls += result.spent.unreportedCalls;
    verdicts[result.code] = (verdicts[result.code] ?? 0) + 1;
    emitTick(options.bus, ticks, result);
    if (result.interrupted) return end('interrupted', 'interrupted during a tick');
    if (result.verdict === 'blocked') return end('blocked', `blocked: ${result.code}`);
    if (result.code === 'STOP_MILESTONE_CHANGED')
      return end('stop', `milestone changed (${result.detail ?? ''})`);
    if (result.verdict === 'stop') return end('stop', `stopped: ${result.code}`);
    if (result.control?.action === 'stop')
      return end('success', `control stop${result.control.reason ? `: ${result.control.reason}` : ''}`);
    if (result.budgetWarning)
      return end('success', 'budget warning (soft stop): review the budget before going on');
  }
}

function refusedExit(result: TickResult): LoopExit {
  if (result.interrupted) return 'interrupted';
  return result.verdict === 'blocked' ? 'blocked' : 'stop';
}

function emitTick(bus: EngineBus, tick: number, result: TickResult): void {
  const report = result.report;
  bus.emit({
    type: 'loop.tick',
    tick,
    run_id: report?.run_id ?? '',
    verdict: result.verdict,
    code: result.code,
    task_id: report?.task?.task_id ?? null,
    milestone: result.milestone,
    blast_radius_line: report?.blast_radius_line ?? '0 files, +0/-0, 0 new',
    cost_usd: Math.round(result.spent.costUsd * 1e6) / 1e6,
    held_usd: Math.round(result.spent.unreportedUsd * 1e6) / 1e6,
    held_calls: result.spent.unreportedCalls,
    commit: report?.commit ?? null,
    control: result.control?.action ?? null,
  });
}

function announce(
  bus: EngineBus,
  mode: LoopMode,
  ticks: number,
  verdicts: Record<string, number>,
  totals: RunTotals & { held: { usd: number; calls: number } },
  exit: LoopExit,
  reason: string,
): void {
  bus.emit({
    type: 'loop.finished',
    mode,
    ticks,
    verdicts,
    cost_usd: Math.round(totals.costUsd * 1e6) / 1e6,
    held_usd: Math.round(totals.held.usd * 1e6) / 1e6,
    held_calls: totals.held.calls,
    calls: totals.calls,
    reason,
    exit,
  });
}
