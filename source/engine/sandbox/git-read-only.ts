import type { Sandbox } from './sandbox.js';
import { safeReal } from './sandbox.js';
import { isInside } from './writable-paths.js';

/**
 * Whether no process in this sandbox can write the given git folders (the git dir, the common
 * dir): then nothing a tick runs can change an existing object, and the judge's per-object
 * snapshot of `.git/objects` (which grows with history's loose objects) has nothing to find
 * (issue 17). A folder is read-only inside when
 * - it is inside one of the read-only binds (`.git/`, the workspace): bwrap mounts them after
 *   every writable folder, so they stay read-only even inside one; or
 * - it is outside the repository and no `writable_outside` folder is it, holds it or lies in it:
 *   the rest of the filesystem is bound read-only.
 * Anything else (a git dir elsewhere in the tree, a folder that does not resolve) answers false,
 * and the guard runs as without the sandbox.
 */
export function gitFoldersReadOnly(sandbox: Sandbox, folders: readonly string[]): boolean {
  if (sandbox.kind !== 'bwrap') return false;
  return folders.every((folder) => {
    const real = safeReal(folder);
    if (real === null) return false;
    if (sandbox.readOnly.some((ro) => ro === real || isInside(ro, real))) return true;
    const overlaps = (other: string) => other === real || isInside(other, real) || isInside(real, other);
    return !overlaps(sandbox.root) && !sandbox.writableOutside.some(overlaps);
  });
}
