import { createHash } from 'node:crypto';
import type { Task } from '../protocol/task.js';

/**
 * A task's plan, reduced to what makes it the same attempt again (issue 15, "re-planning with a
 * task fingerprint"): its kind, intent, scope, verification and builder instructions, with the
 * task id, the milestone and whitespace or case left out. Two proposals with the same
 * fingerprint are the same plan, whatever the orchestrator named them.
 */
export function planFingerprint(task: Task): string {
  const squeeze = (text: string) => text.toLowerCase().replace(/\s+/g, ' ').trim();
  const plan = {
    kind: task.task_kind,
    intent: squeeze(task.intent),
    allowed: [...task.scope.allowed_globs].sort(),
    forbidden: [...task.scope.forbidden_globs].sort(),
    fast: [...task.verification.fast].sort(),
    slow: [...task.verification.slow].sort(),
    instructions: 'builder' in task && task.builder ? squeeze(task.builder.instructions) : '',
  };
  return createHash('sha1').update(JSON.stringify(plan)).digest('hex').slice(0, 16);
}
