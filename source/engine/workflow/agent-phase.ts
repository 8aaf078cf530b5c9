import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentRequest } from '../agents/agent-run.js';
import { recordAgentInFlight } from '../session/recover.js';
import { PACKAGE_ROOT } from '../workspace/package-assets.js';
import { runAgentStep, type StepOutcome } from './agent-step.js';
import type { CheckedTree } from './checked-tree.js';
import type { BreakerPhase, PhaseResult, WorkflowContext } from './context.js';
import { evidenceWatcher } from './evidence.js';
import { rejectionNote } from './gate-feedback.js';
import { type JudgedRun, judgedAgentRun, type PhaseScope, phaseWriteFence } from './judged-run.js';
import { answerQuestion, judgedFailure, phaseSignal, unfinished } from './phase-helpers.js';
import type { PlanTask } from './tasks-file.js';

/**
 * One agent phase of seed 002 (spec-agent, the single dev-agent, qa-agent): the phase timeout,
 * the phase's circuit breaker, retries, questions for the human, the workflow's spend cap, and the
 * judge from git reality around the whole of it, so the phase ends on a judged commit or nothing.
 */

export type WorkflowAgentRole = 'spec' | 'dev' | 'qa';

export interface AgentPhase {
  readonly role: WorkflowAgentRole;
  readonly phase: BreakerPhase;
  readonly phaseTimeoutSeconds: number;
  /** One run of the agent CLI (seed 002 §6 "Agent (per run)"). */
  readonly runTimeoutMs: number;
  readonly maxTurns: number;
  readonly scope: PhaseScope;
  /**
   * Where the sandbox lets the agent write (issue 14), read at each run: the work's own paths.
   * Absent: the phase's scope (`scope.allowed`).
   */
  readonly writable?: () => Promise<readonly string[]>;
  readonly commitMessage: string;
  readonly prompt: (note: string | null) => Promise<string>;
  readonly verifyDone: (text: string) => Promise<string | null>;
  /** TASKS.md statuses changed while the agent ran (the single dev-agent updates them). */
  readonly onTasks?: (tasks: PlanTask[]) => Promise<void>;
  /** The tree the runner's checks passed on, which the commit must record (the single dev-agent). */
  readonly verifiedTree?: () => CheckedTree | null;
}

export type AgentPhaseResult = { kind: 'done'; run: JudgedRun } | { kind: 'end'; result: PhaseResult };

/** Appended to Claude Code's own system prompt: who the agent is, and how it says it is done. */
const ROLE_SYSTEM: Record<WorkflowAgentRole, string> = {
  spec: 'You are the spec-agent of Ralphy (Relais). You write the specification and the task list; you do not write code.',
  dev: 'You are the dev-agent of Ralphy (Relais). You implement the tasks of specs/TASKS.md with tests.',
  qa: 'You are the qa-agent of Ralphy (Relais). You review code quality and security and write a report; you do not change code.',
};
const SIGNAL_RULE =
  'When, and only when, your task is complete, end your final answer with a line of its own: EXIT_SIGNAL: true. If it is not complete, say why and end with EXIT_SIGNAL: false. If you need a decision from the human, end your answer with the question.';

export async function runAgentPhase(ctx: WorkflowContext, spec: AgentPhase): Promise<AgentPhaseResult> {
  const breaker = ctx.breakerFor(spec.phase);
  ctx.showBreaker(breaker);
  const phase = phaseSignal(ctx, spec.phaseTimeoutSeconds);
  let unanswered: string | null = null;
  let overBudget: string | null = null;
  // The agent's process group goes to the crash record, so a resume after kill -9 can end it.
  let agentRecord: Promise<void> = Promise.resolve();
  try {
    // An answer given before a crash or an interrupt still reaches the agent on resume, and so
    // does a human's reason for rejecting this phase's work at its gate.
    let note: string | null = joinNotes(
      rejectionNote(ctx.workflow, spec.phase),
      ctx.workflow.pending_answer
        ? `The human answered your earlier question: ${ctx.workflow.pending_answer}`
        : null,
    );
    const run = await judgedAgentRun(
      ctx,
      spec.scope,
      spec.commitMessage,
      spec.verifiedTree,
      async (): Promise<StepOutcome> => {
        let costSoFar = 0;
        for (;;) {
          const step = await runAgentStep({
            role: spec.role,
            runner: ctx.runner,
            bus: ctx.bus,
            breaker,
            clock: ctx.options.clock,
            signal: phase.signal,
            retries: ctx.setup.config.workflow.agent_retries,
            request: async (retryNote) => ({
              ...request(ctx, spec, await spec.prompt(joinNotes(note, retryNote))),
              writableGlobs: spec.writable ? await spec.writable() : spec.scope.allowed,
              onSpawn: (pgid) => {
                agentRecord = recordAgentInFlight(ctx.setup.paths, pgid).catch(() => undefined);
              },
            }),
            verifyDone: spec.verifyDone,
            watch: evidenceWatcher(ctx, breaker, spec.onTasks),
            onBreaker: ctx.breakerReporter(breaker),
            onCost: (usd, reported) => ctx.addCall(usd, reported),
            // Cost is known once a run ends: a finished step is kept; no new run starts past the cap.
            stopIf: () => ctx.overBudget()?.detail ?? null,
            onWaiting: (until) => ctx.waiting(until),
          });
          costSoFar += step.costUsd;
          await agentRecord;
          if (step.kind === 'over_budget') overBudget = step.detail;
          if (step.kind !== 'question') return { ...step, costUsd: costSoFar };
          note = await answerQuestion(ctx, spec.role, step, breaker);
          if (note === null) {
            unanswered = step.question;
            return { kind: 'failed', detail: 'needs input', costUsd: costSoFar };
          }
        }
      },
    );
    const end = (result: PhaseResult): AgentPhaseResult => ({
      kind: 'end',
      result: withKept(result, run.kept),
    });
    if (run.step.kind === 'done') {
      const violation = judgedFailure(run, spec.role);
      if (violation) return end(violation);
      await ctx.update({ pending_answer: null });
      // Seed 002 §9's line, said only now: EXIT_SIGNAL was read and git agrees with the work.
      ctx.bus.emit({ type: 'log', level: 'info', message: `Agent: ${spec.role}-agent completed` });
      return { kind: 'done', run };
    }
    if (overBudget !== null)
      return end({
        kind: 'fail',
        reason: ctx.overBudget()?.reason ?? 'budget_exhausted',
        detail: overBudget,
      });
    if (unanswered !== null)
      return end({
        kind: 'fail',
        reason: 'needs_input',
        detail: `${spec.role}-agent asked a question nobody answered: ${unanswered}`,
      });
    return end(unfinished(ctx, run.step, phase, spec.role));
  } finally {
    phase.dispose();
  }
}

/** A failure says where the rolled-back work was kept, so nothing is lost to it. */
function withKept(result: PhaseResult, kept: string | null): PhaseResult {
  return kept && result.kind === 'fail' ? { ...result, detail: `${result.detail} (${kept})` } : result;
}

function joinNotes(...notes: Array<string | null>): string | null {
  const present = notes.filter((n): n is string => !!n);
  return present.length > 0 ? present.join('\n\n') : null;
}

function request(
  ctx: WorkflowContext,
  spec: AgentPhase,
  userPrompt: string,
): Omit<AgentRequest, 'signal' | 'attempt'> {
  const { config, facts } = ctx.setup;
  const agent = config.agents[spec.role];
  const tools = config.workflow.agent_tools.split(',');
  const mode = config.workflow.permission_mode;
  return {
    role: spec.role,
    systemPrompt: `${ROLE_SYSTEM[spec.role]}\n${SIGNAL_RULE}`,
    userPrompt,
    model: agent.model,
    fallbackModel: agent.fallback_model,
    maxTurns: spec.maxTurns,
    maxBudgetUsd: config.workflow.agent_max_budget_usd,
    tools,
    permissionMode: mode,
    // With acceptEdits, shell commands wait for the human's "allow" (a needs-input gate).
    allowedTools:
      mode === 'acceptEdits'
        ? [...tools.filter((t) => t !== 'Bash'), ...ctx.workflow.allowed_tools]
        : undefined,
    streaming: true,
    cwd: facts.root,
    // Claude Code refuses an Edit or Write outside the phase's scope before it happens.
    writeFence: phaseWriteFence(ctx, spec.scope),
    timeoutMs: spec.runTimeoutMs,
  };
}

/** The workflow's prompt templates: the project's copy in relais/prompts, else the shipped one. */
export async function readAgentPrompt(ctx: WorkflowContext, name: 'spec.txt' | 'dev.txt' | 'qa.txt') {
  const own = await readFile(join(ctx.setup.paths.promptsDir, name), 'utf8').catch(() => null);
  return own ?? readFile(join(PACKAGE_ROOT, 'prompts', name), 'utf8');
}
