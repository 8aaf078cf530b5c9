import { lstat, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { WorkspacePaths } from './paths.js';

/** History snapshots (seed 000 §14): one folder per run, size checked against the cap in preflight. */

export function runHistoryDir(paths: WorkspacePaths, runId: string): string {
  return join(paths.historyDir, runId);
}

export async function ensureRunHistoryDir(paths: WorkspacePaths, runId: string): Promise<string> {
  const dir = runHistoryDir(paths, runId);
  await mkdir(dir, { recursive: true });
  return dir;
}

/** Total bytes under the history folder; symlinks count as themselves and are never followed. */
export async function folderSizeBytes(dir: string): Promise<number> {
  let total = 0;
  const pending = [dir];
  while (pending.length > 0) {
    const current = pending.pop() as string;
    const entries = await readdir(current, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const full = join(current, entry.name);
      if (entry.isDirectory()) pending.push(full);
      else total += (await lstat(full).catch(() => null))?.size ?? 0;
    }
  }
  return total;
}
