import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { readRegularFile } from './stat-or-null.js';

const PACKED_REFS_READ_CAP = 8 * 1024 * 1024;

/**
 * False only when git's files backend can hold no ref under `prefix` (`refs/replace`): no loose
 * folder of that name, no such ref named in packed-refs, and no reftable (which keeps every ref in
 * files of its own). Then the caller starts no git to list them (issue 17: a git process is about
 * 3 ms of a tick, and most repositories have neither replace refs nor recovered ones). Creating
 * such a ref makes the folder or writes its name into packed-refs, so a ref made since the last
 * look is never missed. Any doubt (a read failing other than "not there") says true: git is asked.
 */
export function refsMayExistUnder(commonDir: string, prefix: string): boolean {
  try {
    if (lstatSync(join(commonDir, 'reftable'), { throwIfNoEntry: false })) return true;
    if (lstatSync(join(commonDir, prefix), { throwIfNoEntry: false })) return true;
    const packed = join(commonDir, 'packed-refs');
    if (!lstatSync(packed, { throwIfNoEntry: false })) return false;
    // Opened without waiting and read only when it is a regular file of at most 8 MiB (about
    // 100,000 refs): a FIFO, a link to a device or a file of gigabytes a builder left in its place
    // must not hold the runner (git is asked instead). Searched as bytes, not decoded.
    const bytes = readRegularFile(packed, PACKED_REFS_READ_CAP);
    return bytes === null || bytes.includes(` ${prefix}/`);
  } catch {
    return true;
  }
}
