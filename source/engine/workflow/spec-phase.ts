import { lstat, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { prdHandoff } from '../planner/prd-session.js';
import type { TaskRecord } from '../protocol/workflow.js';
import { testCommandOf } from '../supervise/breaker-settings.js';
import { readAgentPrompt, runAgentPhase } from './agent-phase.js';
import type { PhaseResult, WorkflowContext } from './context.js';
import { fill, readProjectFile, readTasksFile, SPEC_FILE, TASKS_FILE } from './phase-helpers.js';
import { type PlanTask, parseTasks } from './tasks-file.js';

/**
 * SPECIFICATION (seed 002 §3.1, §4 phase 1): the spec-agent turns PRD.md into specs/SPEC.md and
 * specs/TASKS.md in one pass. Its claim is checked before it counts: SPEC.md must say something and
 * TASKS.md must parse with at least one task; then the judge keeps it inside specs/.
 */
export async function specPhase(ctx: WorkflowContext): Promise<PhaseResult> {
  const { workflow } = ctx.setup.config;
  const template = await readAgentPrompt(ctx, 'spec.txt');
  // Seed 004's handoff. A project's own spec.txt from before {{PLANNING}} existed still gets it.
  const planning = await prdHandoff(ctx.setup.paths, ctx.prd);
  const prd =
    planning && !template.includes('{{PLANNING}}') ? `${ctx.prd.text}\n\n${planning}` : ctx.prd.text;
  const stack = [
    workflow.stack.language,
    testCommandOf(ctx.setup.config) ? `tests: ${testCommandOf(ctx.setup.config)}` : '',
  ]
    .filter(Boolean)
    .join('; ');
  const outcome = await runAgentPhase(ctx, {
    role: 'spec',
    phase: 'SPECIFICATION',
    phaseTimeoutSeconds: workflow.timeouts.specification,
    runTimeoutMs: workflow.timeouts.agent * 1000,
    maxTurns: workflow.max_turns.spec,
    scope: {
      allowed: ['specs/**'],
      allowNewFiles: true,
      allowLockfileChanges: false,
      maxFiles: 20,
      maxLines: 10_000,
    },
    // The sandbox widens a missing folder to its parent (here the whole tree): specs/ is made
    // first, empty (git does not see it), so only it is writable.
    writable: async () => {
      const specs = join(ctx.setup.facts.root, 'specs');
      await mkdir(specs).catch(() => undefined);
      // A `specs` that is a file or a symlink would widen to the whole tree: nothing then.
      const real = await lstat(specs).catch(() => null);
      return real?.isDirectory() ? ['specs/**'] : [];
    },
    commitMessage: `ralphy: specification and tasks for "${ctx.prd.title}"`,
    prompt: async (note) =>
      fill(template, {
        SPEC_FILE,
        TASKS_FILE,
        PRD_FILE: ctx.prd.issue === undefined ? 'PRD.md' : `GitHub issue #${ctx.prd.issue}, as planned`,
        PRD: prd,
        PLANNING: planning,
        STACK: stack || '(not set: follow the project as it is)',
        NOTE: note ?? '',
      }),
    verifyDone: () => specProblem(ctx),
  });
  if (outcome.kind === 'end') return outcome.result;
  const parsed = await readTasksFile(ctx);
  if (!parsed.ok) return { kind: 'fail', reason: 'invalid_output', detail: parsed.problems.join('; ') };
  await recordTasks(ctx, parsed.tasks);
  return { kind: 'next', event: 'spec_done' };
}

/** Why the spec-agent's "done" is not believed yet, or null. */
async function specProblem(ctx: WorkflowContext): Promise<string | null> {
  const spec = await readProjectFile(ctx, SPEC_FILE);
  if (spec.trim().length === 0) return `${SPEC_FILE} is missing or empty`;
  const tasks = await readProjectFile(ctx, TASKS_FILE, 1_000_000);
  if (tasks.trim().length === 0) return `${TASKS_FILE} is missing or empty`;
  const parsed = parseTasks(tasks);
  if (!parsed.ok) return `${TASKS_FILE} does not parse: ${parsed.problems.slice(0, 5).join('; ')}`;
  return null;
}

/** What a task record says when only TASKS.md, written by the agent, calls the task completed. */
const TASKS_CLAIM = 'the agent marked it completed in TASKS.md';

export async function recordTasks(ctx: WorkflowContext, tasks: readonly PlanTask[]): Promise<void> {
  const before = ctx.workflow.tasks;
  const records: TaskRecord[] = tasks.slice(0, 500).map((t) => {
    const known = ctx.workflow.tasks.find((r) => r.number === t.number);
    // Issue 15: TASKS.md saying "completed" is the agent's claim. A task the runner knew as not
    // completed stays so until the runner verifies it (it then sets `verified` and the status):
    // a claim the runner disproved is never counted as done, in WORKFLOW.json or anywhere else.
    const claimOnly = t.status === 'completed' && known && known.status !== 'completed' && !known.verified;
    return {
      number: t.number,
      title: t.title.slice(0, 300),
      status: claimOnly ? 'in_progress' : t.status,
      claimed: claimOnly ? (known.claimed ?? TASKS_CLAIM) : (known?.claimed ?? null),
      verified: known?.verified ?? null,
      verdict: known?.verdict ?? null,
      commits: known?.commits ?? [],
      ticks: known?.ticks ?? 0,
      selection: known?.selection ?? null,
      failed_plans: known?.failed_plans ?? [],
    };
  });
  await ctx.update({
    tasks: records,
    tasks_total: records.length,
    tasks_completed: records.filter((r) => r.status === 'completed').length,
  });
  for (const r of records.filter((r) => {
    const known = before.find((k) => k.number === r.number);
    return !known || known.status !== r.status || known.title !== r.title;
  }))
    ctx.bus.emit({
      type: 'task.updated',
      number: r.number,
      title: r.title,
      status: r.status,
      claimed: r.claimed,
      verified: r.verified,
      verdict: r.verdict,
    });
}
