import type { RelaisConfig } from '../protocol/config.js';

/**
 * A cycle task's scope (issue 14): the config's allowed globs plus the files the task plans, taken
 * literally. Claude Code's scope hook refuses the implementer's edits outside it, and the OS
 * sandbox makes only its folders writable, to the implementer and to stage 1's checks alike.
 */
export function cycleTaskGlobs(
  config: Pick<RelaisConfig, 'scope'>,
  files: ReadonlyArray<{ readonly path: string }> | null | undefined,
): string[] {
  return [...config.scope.default_allowed_globs, ...(files ?? []).map((f) => literal(f.path))];
}

/** A planned path as a glob that matches exactly it (`src/[id].ts` is a file name, not a class). */
function literal(path: string): string {
  return path.replace(/[*?[\]{}()!+@\\]/g, '\\$&');
}
