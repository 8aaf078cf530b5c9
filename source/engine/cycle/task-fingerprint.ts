import { createHash } from 'node:crypto';
import type { PlannedTask } from './blocks.js';

/**
 * A cycle task's plan, reduced to what makes it the same attempt again (issue 15, "re-planning
 * with a task fingerprint", as workflow/plan-fingerprint.ts does for the ticks engine): the task, the
 * files it binds with their actions, and the planner's guidance, with order, whitespace and case
 * left out; guidance that only repeats the task's summary is no guidance. A re-plan that comes
 * back with the same fingerprint is the plan that already failed.
 */
export function taskPlanFingerprint(task: PlannedTask, guidance: string | null): string {
  const squeeze = (text: string) => text.toLowerCase().replace(/\s+/g, ' ').trim();
  const advice = squeeze(guidance ?? '');
  const plan = {
    task: task.taskId,
    files: task.files.map((f) => `${f.action} ${f.path}`).sort(),
    guidance: advice === squeeze(task.summary) ? '' : advice,
  };
  return createHash('sha1').update(JSON.stringify(plan)).digest('hex').slice(0, 16);
}
