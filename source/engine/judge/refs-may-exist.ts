import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

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
    // Searched as bytes: a packed-refs of a hundred thousand tags is not decoded for one name.
    return readFileSync(join(commonDir, 'packed-refs')).includes(` ${prefix}/`);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}
