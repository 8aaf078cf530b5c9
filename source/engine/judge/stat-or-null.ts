import { type BigIntStats, lstatSync } from 'node:fs';

/**
 * lstat for the judge's per-file loops (objects, tree walks, stamps): synchronous on purpose, since
 * thousands of calls have nothing to overlap and the async round trip dominated; any failure
 * (missing, a parent replaced by a file, no permission) reads as "not there".
 */
export function statOrNull(path: string): BigIntStats | null {
  try {
    return lstatSync(path, { bigint: true, throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}

/**
 * lstat results of one judgement, by absolute path: the ignored-files walk fills it and the
 * unsafe-files walk, run right after it on the same tree, reads it instead of a second lstat of
 * every file in node_modules (issue 17). Never kept past the judgement that made it.
 */
export type StatMemo = Map<string, BigIntStats>;

export function statVia(memo: StatMemo | undefined, path: string): BigIntStats | null {
  return memo?.get(path) ?? statOrNull(path);
}
