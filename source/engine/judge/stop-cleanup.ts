import type { WorkspacePaths } from '../workspace/paths.js';
import { type RefsSnapshot, restoreRefs } from './refs-guard.js';
import type { RepoFacts } from './repo.js';
import { findUnsafeFiles, removeUnsafeFiles } from './unsafe-files.js';

/**
 * What a STOP undoes beyond Appendix B's rollback (issue 14), run right before it: unsafe files the
 * tick made go by name (git cannot see a FIFO, and `reset --hard` leaves a hard link whose content
 * matches), and every ref is put back, garbage included, before git has to read one; linked
 * worktrees the tick registered go with them.
 */
export async function undoBeyondGit(
  facts: RepoFacts,
  paths: WorkspacePaths,
  guards: { readonly refsBefore: RefsSnapshot; readonly startedAtMs: number },
  /** Refs the runner made on purpose since the snapshot (a keep-aside of the run's commits). */
  keepRefs: readonly string[] = [],
): Promise<string[]> {
  const unsafe = await findUnsafeFiles(facts.root, paths.dir, guards.startedAtMs);
  return [
    ...(await removeUnsafeFiles(facts.root, unsafe)),
    ...(await restoreRefs(guards.refsBefore, facts, keepRefs, paths.relDir)),
  ];
}
