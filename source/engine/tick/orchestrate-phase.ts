import { type Task, taskSchema } from '../protocol/task.js';
import { writeJsonAtomic } from '../workspace/atomic-write.js';
import { orchestrate } from './orchestrate.js';
import { fillTemplate, orchestratorValues, readPrompt } from './prompts.js';
import type { TickContext } from './tick-context.js';

/** ORCHESTRATE (Appendix A2): the task, or null after recording the STOP/BLOCKED outcome. */
export async function proposeTask(ctx: TickContext): Promise<Task | null> {
  const { setup, record, ledger } = ctx;
  const values = await orchestratorValues({
    config: setup.config,
    paths: setup.paths,
    git: setup.git,
    facts: setup.facts,
    state: ledger.state,
  });
  const outcome = await orchestrate({
    config: setup.config,
    runner: ctx.runner,
    bus: ctx.options.bus,
    systemPrompt: await readPrompt(setup.paths, 'orchestrator.system.txt'),
    userPrompt: fillTemplate(await readPrompt(setup.paths, 'orchestrator.user.txt'), values),
    cwd: setup.facts.root,
    signal: ctx.signal,
    timeoutMs: () => ctx.remainingMs(),
    onCallStart: async () => {
      record.orchestrator.calls++;
      await ledger.add({ orchestrator_calls: 1 });
    },
    onCall: async (call) => {
      record.orchestrator.costUsd += call.costUsd;
      await ledger.add({ estimated_cost_usd: call.costUsd });
    },
  });
  if (outcome.kind === 'failed') {
    // A2 rows 1-2.
    record.code = 'STOP_INTERRUPTED';
    record.detail = `orchestrator: ${ctx.interruption() ?? outcome.failure}`;
    record.orchestrator.error = outcome.failure;
    return null;
  }
  if (outcome.kind === 'invalid') {
    // A2 rows 3-4: invalid after the one allowed retry.
    record.code = 'BLOCKED_ORCHESTRATOR_OUTPUT_INVALID';
    record.detail = `orchestrator output invalid after ${outcome.calls} attempt(s): ${outcome.reason}`;
    record.orchestrator.error = outcome.reason;
    return null;
  }
  record.task = outcome.task;
  await writeJsonAtomic(setup.paths.task, taskSchema, outcome.task);
  await ledger.enterMilestone(outcome.task.milestone_id);
  return outcome.task;
}
