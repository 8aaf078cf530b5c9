import * as z from 'zod';
import { describeZodError } from '../../protocol/model-json.js';

/**
 * Seed 003 P2, the brainstorm: "This phase is human-driven. Claude Code must NOT generate seed docs
 * automatically." The human's answers are the whole content of VISION.md, PROJECT.md,
 * REQUIREMENTS.md and ROADMAP.md; the runner only lays them out. The same answers come from the
 * terminal (one question at a time) or from a JSON file (`--answers`, for scripts and tests).
 */

/**
 * Built on the first parse, not at import: the engine's front door re-exports `parseAnswers`, so
 * every command (`relais status` too) imported this module and built its 40-odd zod nodes.
 */
const buildAnswersSchema = () => {
  const line = z.string().trim().min(1).max(2000);
  const paragraph = z.string().trim().min(1).max(8000);
  const phaseId = z.string().regex(/^P[0-9]{1,3}$/, 'a phase id is P followed by a number (P1)');
  const reqId = z.string().regex(/^R[0-9]{1,4}$/, 'a requirement id is R followed by a number (R1)');
  return z
    .strictObject({
      vision: paragraph,
      users: paragraph,
      success: z.array(line).min(1).max(30),
      non_goals: z.array(line).max(30).default([]),
      stack: paragraph,
      constraints: z.array(line).max(30).default([]),
      requirements: z
        .array(z.strictObject({ id: reqId, text: line }))
        .min(1)
        .max(200),
      phases: z
        .array(
          z.strictObject({
            id: phaseId,
            name: z.string().trim().min(1).max(120),
            goal: line,
            requirements: z.array(reqId).min(1).max(200),
            success: z.array(line).min(1).max(30),
          }),
        )
        .min(1)
        .max(30),
    })
    .superRefine((a, ctx) => {
      const ids = a.requirements.map((r) => r.id);
      for (const dup of ids.filter((id, i) => ids.indexOf(id) !== i))
        ctx.addIssue({ code: 'custom', path: ['requirements'], message: `${dup} is listed twice` });
      const phases = a.phases.map((p) => p.id);
      for (const dup of phases.filter((id, i) => phases.indexOf(id) !== i))
        ctx.addIssue({ code: 'custom', path: ['phases'], message: `${dup} is listed twice` });
      a.phases.forEach((p, i) => {
        for (const r of p.requirements.filter((r) => !ids.includes(r)))
          ctx.addIssue({
            code: 'custom',
            path: ['phases', i, 'requirements'],
            message: `${r} is not a requirement`,
          });
      });
      const planned = new Set(a.phases.flatMap((p) => p.requirements));
      const unplanned = ids.filter((id) => !planned.has(id));
      if (unplanned.length > 0)
        ctx.addIssue({
          code: 'custom',
          path: ['phases'],
          message: `no phase delivers ${unplanned.join(', ')}: put each requirement in a phase`,
        });
    });
};

let answersSchema: ReturnType<typeof buildAnswersSchema> | undefined;

export type BrainstormAnswers = z.infer<ReturnType<typeof buildAnswersSchema>>;

export function parseAnswers(
  text: string,
): { ok: true; answers: BrainstormAnswers } | { ok: false; reason: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `not JSON (${(error as Error).message})` };
  }
  answersSchema ??= buildAnswersSchema();
  const parsed = answersSchema.safeParse(value);
  if (!parsed.success) return { ok: false, reason: describeZodError(parsed.error) };
  return { ok: true, answers: parsed.data };
}

/** What the terminal asks, in order; `list` questions take one item a line and end on an empty line. */
export interface Question {
  readonly key: 'vision' | 'users' | 'success' | 'non_goals' | 'stack' | 'constraints';
  readonly text: string;
  readonly list: boolean;
  readonly optional: boolean;
}

export const QUESTIONS: readonly Question[] = [
  { key: 'vision', text: 'What are you building, and why? (one paragraph)', list: false, optional: false },
  { key: 'users', text: 'Who uses it, and what do they need from it?', list: false, optional: false },
  { key: 'success', text: 'How will you know it works? (success criteria)', list: true, optional: false },
  { key: 'non_goals', text: 'What is out of scope?', list: true, optional: true },
  { key: 'stack', text: 'Stack, platforms and where it runs', list: false, optional: false },
  {
    key: 'constraints',
    text: 'Constraints (performance, security, compatibility, deadlines)',
    list: true,
    optional: true,
  },
];
