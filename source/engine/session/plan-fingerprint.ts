import { createHash } from 'node:crypto';
import type { Task } from '../protocol/task.js';

/**
 * A task's plan, reduced to what makes it the same attempt again (issue 15, "re-planning with a
 * task fingerprint"): its kind, its scope (the files it may touch), its verification, and the
 * content words of its intent and builder instructions. The task id, the milestone, word order,
 * case, punctuation, filler words and plural or tense endings are left out, so a plan reworded
 * ("Implement greet in src/a.ts" / "implements the greet function in src/a.ts") is still the plan
 * that failed; a plan with another scope, other checks or other substance is not.
 */
export interface PlanSignature {
  readonly kind: string;
  readonly scope: readonly string[];
  readonly verification: readonly string[];
  readonly words: readonly string[];
}

/** How much of the words two plans of the same scope and checks must share to be one plan. */
const SAME_WORDS = 0.75;

export function planSignature(task: Task): PlanSignature {
  const instructions = 'builder' in task && task.builder ? task.builder.instructions : '';
  return {
    kind: task.task_kind,
    scope: [
      ...task.scope.allowed_globs.map((g) => `+${g}`),
      ...task.scope.forbidden_globs.map((g) => `-${g}`),
      ...(task.scope.allow_new_files ? ['new files'] : []),
      ...(task.scope.allow_lockfile_changes ? ['lockfile'] : []),
    ].sort(),
    verification: [
      ...task.verification.fast.map((v) => `fast ${v}`),
      ...task.verification.slow.map((v) => `slow ${v}`),
    ].sort(),
    words: planWords(`${task.intent}\n${instructions}`),
  };
}

/** A short name for a signature, for reports and prompts. */
export function planFingerprint(plan: PlanSignature): string {
  return createHash('sha1').update(JSON.stringify(plan)).digest('hex').slice(0, 16);
}

/** Same kind, scope and checks, and most of the same words (Jaccard): the same plan. */
export function samePlan(a: PlanSignature, b: PlanSignature): boolean {
  if (a.kind !== b.kind || !sameList(a.scope, b.scope) || !sameList(a.verification, b.verification))
    return false;
  const left = new Set(a.words);
  const right = new Set(b.words);
  if (left.size === 0 && right.size === 0) return true;
  const shared = [...left].filter((w) => right.has(w)).length;
  return shared / (left.size + right.size - shared) >= SAME_WORDS;
}

/** Words that carry no plan: articles, pronouns, auxiliaries, politeness. */
const FILLER = new Set(
  'a an the this that these those it its to of in on at for from by with and or so as be is are was were been being do does did done will would should could can may might must shall please then also just only now here there into onto up down out we i you our your my me us them they he she his her their not no yes'.split(
    ' ',
  ),
);

/** The content words of a text, each reduced to a rough stem, sorted, once each. */
export function planWords(text: string): string[] {
  const words = text
    .toLowerCase()
    .split(/[^a-z0-9_./-]+/)
    .map((w) => w.replace(/^[./-]+|[./-]+$/g, ''))
    .filter((w) => w.length > 1 && !FILLER.has(w))
    .map(stem);
  return [...new Set(words)].sort();
}

/** Plural and tense endings off ("functions", "implemented", "adding" → "function", "implement", "add"). */
function stem(word: string): string {
  if (/[./]/.test(word)) return word; // a path or a file name stays as it is
  for (const ending of ['ing', 'ed', 'es', 's']) {
    if (word.length > ending.length + 2 && word.endsWith(ending)) return word.slice(0, -ending.length);
  }
  return word;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
