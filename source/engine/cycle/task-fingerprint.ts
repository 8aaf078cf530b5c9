import { createHash } from 'node:crypto';
import { planWords } from '../session/plan-fingerprint.js';
import type { PlannedTask } from './blocks.js';

/**
 * A cycle task's plan, reduced to what makes it the same attempt again (issue 15, "re-planning
 * with a task fingerprint", as session/plan-fingerprint.ts does for the ticks engine): the task, the
 * files it binds with their actions, and the content words of the planner's guidance (order, case,
 * punctuation, filler words and plural or tense endings left out); guidance that only repeats
 * the task's summary is no guidance. A re-plan that comes back with the same fingerprint is the
 * plan that already failed.
 */
export function taskPlanFingerprint(task: PlannedTask, guidance: string | null): string {
  // Content words, as the ticks engine compares plans: rewording the same advice is no new plan.
  const advice = planWords(guidance ?? '').join(' ');
  const plan = {
    task: task.taskId,
    files: task.files.map((f) => `${f.action} ${f.path}`).sort(),
    guidance: advice === planWords(task.summary).join(' ') ? '' : advice,
  };
  return createHash('sha1').update(JSON.stringify(plan)).digest('hex').slice(0, 16);
}
