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
