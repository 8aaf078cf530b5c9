import { mkdir } from 'node:fs/promises';
import { acquireLock } from '../workspace/lock.js';
import { cycleRemediation } from './codes.js';
import { type CyclePaths, cyclePaths, readCycleState, writeCycleState } from './state.js';

/**
 * What `relais status` shows of the cycle: phase, track, task, counters, and the reason of a
 * pause with its remediation; and `relais cycle --resume`, which ends a pause.
 */
export async function cycleStatusLines(root: string, workspaceDir: string): Promise<string[]> {
  const read = await readCycleState(cyclePaths(root, workspaceDir));
  if (read.kind === 'missing') return [];
  if (read.kind === 'invalid')
    return [
      `Cycle: needs_human: relais/cycle/STATE.json is invalid (${read.reason})`,
      `  Fix: ${cycleRemediation('CYCLE_STATE_INVALID')}`,
    ];
  const s = read.value;
  const lines = [
    `Cycle: phase ${s.phase}${s.task.sub_step ? `/${s.task.sub_step}` : ''}, mode ${s.mode}, ${s.loop.iteration} cycle(s), run ${s.run_id}`,
  ];
  if (s.track.id && s.track.status === 'in-progress')
    lines.push(
      `  Track ${s.track.id} (${s.track.name ?? ''}): task ${s.track.task_current} of ${s.track.task_count}`,
    );
  if (s.task.id)
    lines.push(
      `  Task ${s.task.id}: retries ${s.task.retry_count}/${s.task.max_retries}, stuck ${s.loop.stuck_count}${s.task.replan_attempted ? ', re-planned' : ''}`,
    );
  if (s.last_action && s.last_result)
    lines.push(
      `  Last: ${s.last_action} ${s.last_result.ok ? 'ok' : 'failed'}: ${s.last_result.details.slice(0, 200)}`,
    );
  if (s.phase === 'needs_human' && s.needs_human) {
    lines.push(`  Needs a human (${s.needs_human.code}): ${s.needs_human.reason.slice(0, 400)}`);
    lines.push(`  Fix: ${s.needs_human.remediation}`);
  }
  return lines;
}

export type ResumeResult = { ok: true; phase: string } | { ok: false; detail: string };

/**
 * Ends a pause: back to the phase the cycle paused in. A running or invalid state is refused, and
 * so is a resume while a cycle holds relais/cycle/lock.json (STATE.json has one writer at a time).
 */
export async function resumeCycle(root: string, workspaceDir: string): Promise<ResumeResult> {
  const paths = cyclePaths(root, workspaceDir);
  await mkdir(paths.dir, { recursive: true });
  const lock = await acquireLock(paths.lock, 'relais cycle --resume');
  if (!lock.ok) return { ok: false, detail: `a cycle is running: ${lock.detail}` };
  try {
    return await resumeLocked(paths);
  } finally {
    await lock.lock.release();
  }
}

async function resumeLocked(paths: CyclePaths): Promise<ResumeResult> {
  const read = await readCycleState(paths);
  if (read.kind !== 'ok')
    return {
      ok: false,
      detail: read.kind === 'missing' ? 'no cycle has run yet' : `STATE.json is invalid: ${read.reason}`,
    };
  const s = read.value;
  if (s.phase !== 'needs_human' || !s.needs_human)
    return { ok: false, detail: `the cycle is not paused (phase ${s.phase})` };
  const phase = s.needs_human.resume_phase;
  await writeCycleState(paths, { ...s, phase, needs_human: null, cycle: { ...s.cycle, status: 'idle' } });
  return { ok: true, phase };
}
