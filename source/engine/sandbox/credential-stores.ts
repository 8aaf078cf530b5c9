import { realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isInside } from './writable-paths.js';

/**
 * The user's credential stores under the real HOME, hidden inside the sandbox. The filesystem is
 * mounted read-only, not hidden: HOME is a private folder, but the real one is still there by its
 * absolute path, and an agent has the network (its model's API), so a key it can read is a key it
 * can send. A verification has no network, but its output goes to the report and to the next
 * agent's prompt. Each store found is covered: a folder by an empty read-only tmpfs, a file by
 * /dev/null. The agent CLIs' own logins (`~/.claude`, `~/.codex`) are not here: their overlays
 * (agent-config.ts) are what the CLIs need to run.
 */
const CREDENTIAL_STORES = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.config/gcloud',
  '.kube',
  '.docker',
  '.config/gh',
  '.config/hub',
  '.password-store',
  '.local/share/keyrings',
  '.terraform.d',
  '.git-credentials',
  '.config/git/credentials',
  '.netrc',
  '.npmrc',
  '.yarnrc.yml',
  '.pypirc',
  '.pgpass',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.gem/credentials',
];

export interface HiddenPath {
  /** Resolved through symlinks: the mount covers what the name leads to. */
  readonly path: string;
  readonly kind: 'dir' | 'file';
}

/**
 * The stores that exist under `home`, never one that holds (or is) a folder the sandbox must
 * reach: the repository, a `writable_outside` folder, an agent's config folder.
 */
export function credentialStores(home: string, keep: readonly string[]): HiddenPath[] {
  const found: HiddenPath[] = [];
  for (const name of CREDENTIAL_STORES) {
    const hit = resolved(join(home, name));
    if (!hit) continue;
    if (keep.some((k) => k === hit.path || isInside(hit.path, k) || isInside(k, hit.path))) continue;
    if (!found.some((f) => f.path === hit.path)) found.push(hit);
  }
  return found;
}

function resolved(path: string): HiddenPath | null {
  try {
    const real = realpathSync(path);
    const stat = statSync(real);
    if (stat.isDirectory()) return { path: real, kind: 'dir' };
    return stat.isFile() ? { path: real, kind: 'file' } : null;
  } catch {
    return null;
  }
}
