import { stat } from 'node:fs/promises';
import { cyclePaths } from './paths.js';

/**
 * What `relais status` shows of the cycle: phase, track, task, counters, and the reason of a
 * pause with its remediation (`relais cycle --resume`, which ends a pause, is in status.ts).
 */
export async function cycleStatusLines(root: string, workspaceDir: string): Promise<string[]> {
  const { state } = cyclePaths(root, workspaceDir);
  // Most projects have no cycle: its schema (about 300 zod nodes) and codes load only when its
  // state file may be there (anything but "no such file" is read, and judged, as before).
  const exists = await stat(state).then(
    () => true,
    (error: NodeJS.ErrnoException) => error.code !== 'ENOENT',
  );
  if (!exists) return [];
  const [{ readCycleState }, { cycleRemediation }] = await Promise.all([
    import('./state.js'),
    import('./codes.js'),
  ]);
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
  if (s.task.human_verdict)
    lines.push(
      `  Human verdict: ${s.task.human_verdict.answer} (${s.task.human_verdict.reason.slice(0, 200)}) for commit ${s.task.human_verdict.commit.slice(0, 12)}`,
    );
  if (s.track.replan_reason && s.track.plan_path === null)
    lines.push(`  Re-plan of track ${s.track.id} pending: ${s.track.replan_reason.slice(0, 300)}`);
  if (s.phase === 'needs_human' && s.needs_human) {
    lines.push(`  Needs a human (${s.needs_human.code}): ${s.needs_human.reason.slice(0, 400)}`);
    lines.push(`  Fix: ${s.needs_human.remediation}`);
  }
  return lines;
}
