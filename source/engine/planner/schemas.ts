import * as z from 'zod';

/**
 * The Relay planner's files under relais/planner/ (seed 004 "Gap Lifecycle (v2)", "Learnings
 * (v2)") and the actions the planner answers with ("Actions (v2 Contract)"). Runner-owned files
 * are strict and validated on read and write; the model's answer is read leniently where the
 * seed is loose (a gap id may come as "12" or 12) and strictly where a rule hangs on it.
 */

export const RESPONDENTS = ['reporter', 'assignee'] as const;
export const SEVERITIES = ['blocking', 'high', 'medium', 'low'] as const;
export const CLOSE_REASONS = ['answered', 'inferred', 'not_relevant'] as const;
export const LEARNING_TYPES = ['domain_learnings', 'code_learnings'] as const;
/** What a comment of the planner is for: the runner's rules differ (questions need gaps, …). */
export const COMMENT_KINDS = ['questions', 'proceed_gate', 'assumptions', 'comment'] as const;

export type Respondent = (typeof RESPONDENTS)[number];
export type CloseReason = (typeof CLOSE_REASONS)[number];
export type LearningType = (typeof LEARNING_TYPES)[number];
export type CommentKind = (typeof COMMENT_KINDS)[number];

const stamp = z.iso.datetime();

/** Seed 004 "Gap fields": a short numeric id a human can type, and how it was closed. */
export const gapSchema = z.strictObject({
  id: z.int().min(1),
  question: z.string().min(1).max(1000),
  respondent: z.enum(RESPONDENTS),
  severity: z.enum(SEVERITIES),
  evidence: z.string().max(1000).nullable(),
  /** One line of "why this matters", shown under the question in the terminal. */
  why: z.string().max(300).nullable(),
  status: z.enum(['open', 'closed']),
  closed_reason: z.enum(CLOSE_REASONS).nullable(),
  closed_note: z.string().max(2000).nullable(),
  /** The question round that asked it (1 for the first batch). */
  round: z.int().min(1),
  asked_at: stamp,
  closed_at: stamp.nullable(),
});

/**
 * One message of the discussion: the planner's comments (`relay`) and the humans' replies. A
 * human answer keeps its raw text (what "verbatim" is checked against) and, when the human
 * answered by gap id, which part answers which gap.
 */
export const messageSchema = z.strictObject({
  id: z.int().min(1),
  from: z.enum(['relay', 'human']),
  /** A GitHub login, `terminal` for the human at the terminal, `--yes` for an automatic proceed. */
  author: z.string().max(100),
  role: z.enum(['reporter', 'assignee', 'other']).nullable(),
  kind: z.enum([...COMMENT_KINDS, 'answer', 'proceed']),
  text: z.string().max(20_000),
  answers: z.array(z.strictObject({ gap_id: z.int().min(1), text: z.string().max(20_000) })).max(100),
  /** Where it came from on GitHub (the comment's id), when it did. */
  source_id: z.string().max(200).nullable(),
  at: stamp,
});

export const handoffSchema = z.strictObject({
  context_summary: z.string().max(8000),
  relevant_finding_ids: z.array(z.string().max(100)).max(100),
  closed_gap_ids: z.array(z.int().min(1)).max(1000),
  learning_ids: z.array(z.int().min(1)).max(1000),
  /** The human message the planner read as the proceed signal. */
  proceed_message_id: z.int().min(1),
  at: stamp,
});

const subjectSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('prd'),
    title: z.string().max(300),
    path: z.string().max(300),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
  }),
  z.strictObject({ kind: z.literal('issue'), number: z.int().min(1), title: z.string().max(300) }),
]);

/** A comment the runner must post to the issue (kept until it is posted: nothing is lost). */
export const outboxEntrySchema = z.strictObject({
  message_id: z.int().min(1),
  posted_at: stamp.nullable(),
  /** Not posted, and never will be by the runner: it looked like it holds a secret (what, where). */
  withheld: z.string().max(300).optional(),
});

export const sessionSchema = z.strictObject({
  schema_version: z.literal(1),
  session_id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,80}$/),
  subject: subjectSchema,
  reporter: z.string().max(100).nullable(),
  assignee: z.string().max(100).nullable(),
  status: z.enum(['open', 'ready']),
  created_at: stamp,
  updated_at: stamp,
  /** Planner runs that asked at least one new question (seed 004: aim for 1, 2 is normal). */
  rounds: z.int().min(0),
  planner_runs: z.int().min(0),
  /** Answers the runner refused (one repair retry each), for the quality signals. */
  repairs: z.int().min(0),
  cost_usd: z.number().min(0),
  /** The highest message id the planner has already been shown: newer human messages need a run. */
  seen_message_id: z.int().min(0),
  next_gap_id: z.int().min(1),
  gaps: z.array(gapSchema).max(1000),
  discussion: z.array(messageSchema).max(2000),
  outbox: z.array(outboxEntrySchema).max(2000),
  handoff: handoffSchema.nullable(),
  /** Seed 004 eval hook: did the spec built from this planning pass the first human gate? */
  spec_first_gate: z.enum(['passed', 'rejected']).nullable(),
  /**
   * On an issue: the planner's failed tries (answers refused twice, CLI failures) on one state of
   * the thread, named by its newest message id, so a scheduler's runs stop calling the model on
   * a thread it keeps failing on until somebody writes.
   */
  planner_failures: z
    .strictObject({
      message_id: z.int().min(0),
      tries: z.int().min(1),
      last_problem: z.string().max(1000),
      at: stamp,
    })
    .optional(),
});

export const learningSchema = z.strictObject({
  id: z.int().min(1),
  type: z.enum(LEARNING_TYPES),
  content: z.string().min(1).max(1000),
  session_id: z.string().max(100),
  /** The human message it was taken from (v0: learnings come from humans only). */
  source_message_id: z.int().min(1),
  source_author: z.string().max(100),
  created_at: stamp,
});

export const learningsFileSchema = z.strictObject({
  schema_version: z.literal(1),
  next_id: z.int().min(1),
  learnings: z.array(learningSchema).max(5000),
});

export type Gap = z.infer<typeof gapSchema>;
export type Message = z.infer<typeof messageSchema>;
export type Handoff = z.infer<typeof handoffSchema>;
export type Session = z.infer<typeof sessionSchema>;
export type Subject = Session['subject'];
export type Learning = z.infer<typeof learningSchema>;
export type LearningsFile = z.infer<typeof learningsFileSchema>;

/* ---------- The planner's answer ---------- */

/** Seed 004 writes gap ids as strings ("12"); the short ids are numbers: both are accepted. */
const gapId = z
  .union([z.int().min(1), z.string().regex(/^\s*#?\d+\s*$/)])
  .transform((v) => Number(String(v).replace('#', '')));
const learningId = gapId;

const postComment = z.strictObject({
  type: z.literal('post_comment'),
  data: z.strictObject({
    content: z.string().trim().min(1).max(8000),
    kind: z.enum(COMMENT_KINDS).default('comment'),
    reply_to_id: z.union([z.string(), z.number()]).nullable().optional(),
  }),
});

const updateGaps = z.strictObject({
  type: z.literal('update_gaps'),
  data: z.strictObject({
    add: z
      .array(
        z.strictObject({
          question: z.string().trim().min(1).max(1000),
          respondent: z.enum(RESPONDENTS),
          severity: z.enum(SEVERITIES),
          evidence: z.string().max(1000).nullable().optional(),
          why: z.string().max(300).nullable().optional(),
        }),
      )
      .max(50)
      .default([]),
    close: z
      .array(
        z.strictObject({
          gap_id: gapId,
          reason: z.enum(CLOSE_REASONS),
          note: z.string().max(2000).nullable().optional(),
        }),
      )
      .max(200)
      .default([]),
  }),
});

const updateLearnings = z.strictObject({
  type: z.literal('update_learnings'),
  data: z.strictObject({
    propose: z
      .array(
        z.strictObject({
          type: z.enum(LEARNING_TYPES),
          content: z.string().trim().min(1).max(1000),
          source_message_id: z.int().min(1).nullable().optional(),
        }),
      )
      .max(20),
  }),
});

const readyForSpec = z.strictObject({
  type: z.literal('ready_for_spec_generation'),
  data: z.strictObject({
    context_summary: z.string().trim().min(1).max(8000),
    relevant_finding_ids: z.array(z.string().max(100)).max(100).default([]),
    closed_gap_ids: z.array(gapId).max(1000),
    learning_ids: z.array(learningId).max(1000).default([]),
  }),
});

export const plannerActionSchema = z.discriminatedUnion('type', [
  postComment,
  updateGaps,
  updateLearnings,
  readyForSpec,
]);

export const plannerAnswerSchema = z.strictObject({ actions: z.array(plannerActionSchema).max(30) });

export type PlannerAction = z.infer<typeof plannerActionSchema>;
export type PlannerAnswer = z.infer<typeof plannerAnswerSchema>;
export type PostComment = Extract<PlannerAction, { type: 'post_comment' }>['data'];
export type GapAdd = Extract<PlannerAction, { type: 'update_gaps' }>['data']['add'][number];
export type GapClose = Extract<PlannerAction, { type: 'update_gaps' }>['data']['close'][number];
export type LearningProposal = Extract<
  PlannerAction,
  { type: 'update_learnings' }
>['data']['propose'][number];
export type ReadyData = Extract<PlannerAction, { type: 'ready_for_spec_generation' }>['data'];
