import micromatch from 'micromatch';
import { refusedPathOf } from '../agents/claude-code/scope-hook.js';

/**
 * When a step of the `ticks` engine completes the TASKS.md task it was aimed at (docs/workflow.md,
 * "When a task is done"). A green step is not enough: tests that passed before the step prove
 * nothing about it. The task is completed only by a step that
 * 1. the runner judged in scope and verified (the caller only asks for a SUCCESS tick),
 * 2. committed a change (a step that changed nothing, the orchestrator's "already done"
 *    included, is "no change"),
 * 3. had no write refused by the runner (the scope hook): it did not do what it set out to,
 * 4. touched the task's own paths, when TASKS.md names any (its Files, and its Scope globs):
 *    otherwise it "did other work".
 * A step that is not accepted keeps its commit (it was judged and verified) but completes nothing;
 * the orchestrator is told why. Pure, so every reading is tested in one place.
 */

/** What TASKS.md says a task touches: its Files line and its Scope globs (null when absent). */
export interface TaskPaths {
  readonly files: readonly string[];
  readonly scope: readonly string[] | null;
}

/** What the runner knows of a SUCCESS step: its commit, the paths it judged, the refused writes. */
export interface StepEvidence {
  readonly commit: string | null;
  readonly touched: readonly string[];
  readonly refused: readonly string[];
}

export interface NotAccepted {
  readonly accepted: false;
  /** For the task's record (shown as "not accepted: …"): `no change`, `did other work: …`. */
  readonly why: string;
  /** For the orchestrator's next prompt. */
  readonly note: string;
}

export type Credit = { readonly accepted: true } | NotAccepted;

export function creditFor(number: number, paths: TaskPaths | null, step: StepEvidence): Credit {
  const own = taskGlobs(paths);
  const named = own.length > 0 ? ` (${describePaths(paths)})` : '';
  if (step.commit === null)
    return {
      accepted: false,
      why: 'no change',
      note: `The last step changed nothing, so task ${number} is not done: the runner completes a task only with a verified change of its own, and tests that already passed prove nothing. Propose an execute task that makes the change task ${number} describes${named}.`,
    };
  if (step.refused.length > 0) {
    const refused = [...new Set(step.refused.map(refusedPathOf))];
    return {
      accepted: false,
      why: `the runner refused ${step.refused.length} write(s): ${refused.slice(0, 5).join(', ')}`,
      note: `The runner refused writes of the last step before they happened (${step.refused.slice(0, 3).join('; ')}), so task ${number} is not done: what it committed stays, but a step completes its task only when none of its writes was refused. Propose a task whose scope covers every path the change needs${named}; a path outside scope.default_allowed_globs cannot be written at all.`,
    };
  }
  if (own.length === 0 || step.touched.some((path) => touchesTask(path, own))) return { accepted: true };
  const did = step.touched.slice(0, 5).join(', ');
  return {
    accepted: false,
    why: `did other work: ${did}, not task ${number}'s ${describePaths(paths)}`,
    note: `The last step changed ${did}, none of task ${number}'s paths (${describePaths(paths)}), so it completes nothing: its commit stays, credited to no task. Propose an execute task for task ${number} itself.`,
  };
}

/** The orchestrator said the task needs no change: the runner saw none, so nothing is completed. */
export function alreadyDoneClaim(number: number, paths: TaskPaths | null, reason: string): NotAccepted {
  const named = taskGlobs(paths).length > 0 ? ` (${describePaths(paths)})` : '';
  return {
    accepted: false,
    why: `no change (the orchestrator said it was already done: ${reason.slice(0, 200)})`,
    note: `You said task ${number} needs no change. The runner completes a task only with a verified change of its own that touches its paths${named}; a claim that it is already done completes nothing. Propose an execute task that makes the change task ${number} describes.`,
  };
}

/**
 * The literal files the task's Files line names that the config's fence leaves out: no step can
 * write them (the scope hook and the judge refuse), so the task could never be credited.
 */
export function filesOutsideFence(paths: TaskPaths | null, configAllowed: readonly string[]): string[] {
  if (!paths) return [];
  return cleanPaths(paths.files).filter(
    (file) =>
      looksLikePath(file) &&
      !micromatch.scan(file).isGlob &&
      !micromatch.isMatch(file, [...configAllowed], { dot: true }),
  );
}

/**
 * A word of a Files line that can only be a path (a folder or an extension in it): the line is
 * the spec-agent's prose too ("src/a.ts and src/b.ts"), and stopping a workflow on "and" would be
 * the runner's mistake. A bare name (Makefile) is not checked here; the fence still holds at
 * the write.
 */
function looksLikePath(word: string): boolean {
  return word.includes('/') || /\.[A-Za-z0-9]+$/.test(word);
}

/** The globs a task's change must touch: Files (literal paths, read as globs too) and Scope. */
export function taskGlobs(paths: TaskPaths | null): string[] {
  if (!paths) return [];
  return [...new Set([...cleanPaths(paths.files), ...cleanPaths(paths.scope ?? [])])];
}

/** Whether `path` is one of the task's paths: equal, inside a named folder, or matching a glob. */
export function touchesTask(path: string, globs: readonly string[]): boolean {
  return globs.some((glob) => {
    const folder = glob.replace(/\/+$/, '');
    return path === folder || path.startsWith(`${folder}/`) || micromatch.isMatch(path, glob, { dot: true });
  });
}

/**
 * The words of a Files line that name paths: a spec-agent may add notes such as "(new)" or "none".
 * A leading "./" is dropped, as git never names a path so.
 */
export function cleanPaths(words: readonly string[]): string[] {
  return words
    .map((w) =>
      w
        .trim()
        .replace(/^\.\//, '')
        .replace(/[;:]+$/, ''),
    )
    .filter((w) => w.length > 0 && !/[()]/.test(w) && !/^(none|n\/a|-|—|tbd)$/i.test(w));
}

function describePaths(paths: TaskPaths | null): string {
  if (!paths) return '';
  const files = cleanPaths(paths.files);
  return (files.length > 0 ? files : cleanPaths(paths.scope ?? [])).slice(0, 8).join(', ');
}
