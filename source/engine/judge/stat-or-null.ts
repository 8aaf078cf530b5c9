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

/** What the unsafe-files walk needs of one file's lstat. */
export interface LinkFacts {
  /** ctime in whole milliseconds, rounded down (never later than the bigint lstat's ctimeMs + 1). */
  readonly ctimeFloorMs: number;
  readonly nlink: number;
  readonly isFile: boolean;
}

/**
 * lstat results of one judgement, by absolute path: the ignored-files walk fills it and the
 * unsafe-files walk, run right after it on the same tree, reads it instead of a second lstat of
 * every file in node_modules (issue 17). Never kept past the judgement that made it.
 */
export type StatMemo = Map<string, LinkFacts>;

export function linkFactsOf(stat: { ctimeMs: number; nlink: number; isFile(): boolean }): LinkFacts {
  return { ctimeFloorMs: Math.floor(stat.ctimeMs), nlink: stat.nlink, isFile: stat.isFile() };
}

export function linkFacts(memo: StatMemo | undefined, path: string): LinkFacts | null {
  const known = memo?.get(path);
  if (known) return known;
  const stat = statOrNull(path);
  if (!stat) return null;
  return { ctimeFloorMs: Number(stat.ctimeMs), nlink: Number(stat.nlink), isFile: stat.isFile() };
}
