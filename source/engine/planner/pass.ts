import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineBus } from '../events.js';
import type { RelaisConfig } from '../protocol/config.js';
import { breakerFrom, reportBreakerOnBus } from '../supervise/breaker-settings.js';
import { PACKAGE_ROOT } from '../workspace/package-assets.js';
import { type Applied, applyBatch } from './apply.js';
import { contextDump, type Finding, openGaps, type SubjectView } from './context-dump.js';
import { renderFacts } from './facts.js';
import { learningSource } from './learning-source.js';
import { callPlanner, type PlannerCallInput } from './planner-call.js';
import type { Learning, LearningProposal, Session } from './schemas.js';
import { addLearnings, type PlannerPaths, readLearnings, writeSession } from './store.js';
import { validateBatch } from './validate.js';

/**
 * One planner pass: rebuild the context dump from the stored session, ask the planner, and only
 * if its whole answer keeps the rules, execute it: gaps, learnings (and FACTS.md), comments,
 * readiness. The session is saved whatever happens (its spend and repairs count too).
 */

export interface PassInput {
  readonly pp: PlannerPaths;
  readonly session: Session;
  readonly subject: SubjectView;
  readonly findings: readonly Finding[];
  readonly config: RelaisConfig;
  readonly bus: EngineBus;
  readonly now: () => Date;
  /** GitHub: comments wait in the outbox until they are posted. */
  readonly outbox: boolean;
  readonly call: Omit<PlannerCallInput, 'systemPrompt' | 'userPrompt' | 'validate' | 'config' | 'bus'>;
}

/** A standalone planner run's call settings: its own PLANNING breaker, reported on the bus, no spend record. */
export function standaloneCall(input: {
  readonly runner: PlannerCallInput['runner'];
  readonly root: string;
  readonly signal: AbortSignal;
  readonly clock: PlannerCallInput['clock'];
  readonly config: RelaisConfig;
  readonly bus: EngineBus;
}): PassInput['call'] {
  const breaker = breakerFrom(input.config, 'PLANNING', () => input.clock.now());
  return {
    runner: input.runner,
    cwd: input.root,
    signal: input.signal,
    clock: input.clock,
    breaker,
    onBreaker: reportBreakerOnBus(input.bus, breaker),
    onCost: async () => undefined,
  };
}

export type PassOutcome =
  | { kind: 'applied'; applied: Applied }
  | { kind: 'invalid'; session: Session; problems: string[] }
  | { kind: 'failed'; session: Session; detail: string }
  /** A planner file the runner cannot read (it is kept as it is). */
  | { kind: 'unreadable'; session: Session; detail: string }
  | { kind: 'breaker_open'; session: Session; detail: string }
  | { kind: 'aborted'; session: Session };

export async function plannerPass(input: PassInput): Promise<PassOutcome> {
  const { config, pp, session } = input;
  const read = await readLearnings(pp);
  if (!read.ok) return { kind: 'unreadable', session, detail: read.problem };
  const learnings = read.file.learnings;
  const seen = session.discussion.reduce((max, m) => Math.max(max, m.id), 0);
  const outcome = await callPlanner({
    ...input.call,
    config,
    bus: input.bus,
    systemPrompt: await plannerSystemPrompt(pp),
    userPrompt: contextDump({
      subject: input.subject,
      session,
      learnings,
      findings: input.findings,
      maxRounds: config.planner.max_rounds,
      maxQuestions: config.planner.max_questions_per_round,
      discussionChars: config.planner.max_discussion_chars,
      learningsShown: config.planner.max_learnings_in_context,
    }),
    validate: (batch) =>
      validateBatch(batch, {
        session,
        learnings,
        findingIds: input.findings.map((f) => f.id),
        maxRounds: config.planner.max_rounds,
        maxQuestions: config.planner.max_questions_per_round,
      }),
  });
  const spent: Session = {
    ...session,
    cost_usd: round6(session.cost_usd + outcome.costUsd),
    repairs: session.repairs + outcome.repairs,
  };
  if (outcome.kind !== 'valid') {
    await writeSession(pp, spent);
    if (outcome.kind === 'invalid') return { kind: 'invalid', session: spent, problems: outcome.problems };
    if (outcome.kind === 'aborted') return { kind: 'aborted', session: spent };
    return { kind: outcome.kind, session: spent, detail: outcome.detail };
  }
  const now = input.now();
  let stored: Learning[];
  try {
    stored = await storeLearnings(input, spent, outcome.batch.learnings, now);
  } catch (error) {
    await writeSession(pp, spent);
    return { kind: 'failed', session: spent, detail: (error as Error).message };
  }
  const applied = applyBatch({
    session: spent,
    batch: outcome.batch,
    learnings: stored,
    seenMessageId: seen,
    outbox: input.outbox,
    now,
  });
  await writeSession(pp, applied.session);
  announce(input.bus, applied);
  return { kind: 'applied', applied };
}

/** The proposed learnings, stored, and FACTS.md rendered from the file under the same lock. */
async function storeLearnings(
  input: PassInput,
  session: Session,
  proposals: readonly LearningProposal[],
  now: Date,
): Promise<Learning[]> {
  // Validated: each has its human source (learning-source.ts); one without is never stored.
  const sourced = proposals.flatMap((p) => {
    const source = learningSource(session, p);
    if (source.ok) return [{ proposal: p, message: source.message }];
    input.bus.emit({
      type: 'log',
      level: 'warn',
      message: `planner: learning "${p.content.slice(0, 80)}" dropped: it ${source.why}`,
    });
    return [];
  });
  if (sourced.length === 0) return [];
  const { stored } = await addLearnings(
    input.pp,
    sourced.map(({ proposal, message }) => ({
      type: proposal.type,
      content: proposal.content,
      session_id: session.session_id,
      source_message_id: message.id,
      source_author: message.author,
      created_at: now.toISOString(),
    })),
    (all) =>
      renderFacts(input.pp.facts, all, {
        maxItems: input.config.planner.facts_max_learnings,
        maxChars: input.config.planner.facts_max_chars,
      }),
  );
  return stored;
}

function announce(bus: EngineBus, applied: Applied): void {
  const { session } = applied;
  bus.emit({
    type: 'planner.actions',
    session_id: session.session_id,
    round: session.rounds,
    comments: applied.comments.map((c) => ({ kind: c.kind, content: c.text })),
    gaps_added: applied.added.map((g) => ({
      id: g.id,
      question: g.question,
      respondent: g.respondent,
      severity: g.severity,
      why: g.why,
    })),
    gaps_closed: applied.closed.map((g) => ({
      id: g.id,
      reason: g.closed_reason ?? 'not_relevant',
      note: g.closed_note,
    })),
    learnings_added: applied.learnings.map((l) => ({ id: l.id, type: l.type, content: l.content })),
    open_gaps: openGaps(session.gaps).length,
  });
  if (!applied.handoff) return;
  bus.emit({
    type: 'planner.ready',
    session_id: session.session_id,
    context_summary: applied.handoff.context_summary,
    closed_gap_ids: applied.handoff.closed_gap_ids,
    learning_ids: applied.handoff.learning_ids,
    assumptions: applied.assumptions.map((a) => ({
      gap_id: a.gap.id,
      question: a.gap.question,
      note: a.note,
    })),
  });
}

/** The project's copy in relais/prompts (the human may tune it), else the shipped one. */
export async function plannerSystemPrompt(pp: PlannerPaths): Promise<string> {
  const own = await readFile(join(pp.workspace.promptsDir, 'planner.system.txt'), 'utf8').catch(() => null);
  return own ?? readFile(join(PACKAGE_ROOT, 'prompts', 'planner.system.txt'), 'utf8');
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
