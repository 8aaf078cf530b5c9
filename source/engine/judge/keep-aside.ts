import { copyFile, lstat, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { WorkspacePaths } from '../workspace/paths.js';
import { type Git, splitNul } from './git.js';
import type { RepoFacts } from './repo.js';

/**
 * Before a long agent run is rolled back (interrupted, timed out, stopped by the breaker, out of
 * scope), what it produced is kept, as crash recovery keeps it: its commits at
 * refs/relais/recovered/<run>, tracked changes as relais/recovered/<run>/worktree.patch, new files
 * copied to relais/recovered/<run>/untracked/. Returns a sentence saying where, or null when the
 * run left nothing.
 */
export async function keepAside(
  git: Git,
  facts: RepoFacts,
  paths: WorkspacePaths,
  runId: string,
): Promise<string | null> {
  const keep = join(paths.recoveredDir, runId);
  const kept: string[] = [];
  const head = (await git.run(['rev-parse', '--verify', '-q', 'HEAD^{commit}'])).stdout
    .toString('utf8')
    .trim();
  if (head && head !== facts.head) {
    await git.ok(['update-ref', `refs/relais/recovered/${runId}`, head]);
    kept.push(`its commits at refs/relais/recovered/${runId}`);
  }
  const patch = await git.run(['diff', '--binary', '--no-ext-diff', '--no-textconv', facts.head]);
  if (patch.stdout.length > 0) {
    await mkdir(keep, { recursive: true });
    await writeFile(join(keep, 'worktree.patch'), patch.stdout);
    kept.push(`${paths.relDir}/recovered/${runId}/worktree.patch`);
  }
  const untracked = splitNul(await git.ok(['ls-files', '-z', '--others', '--exclude-standard']));
  for (const rel of untracked) {
    // Regular files only: a link is not followed (it may point anywhere), a FIFO never read.
    const info = await lstat(join(facts.root, rel)).catch(() => null);
    if (!info?.isFile()) continue;
    const target = join(keep, 'untracked', rel);
    await mkdir(dirname(target), { recursive: true });
    await copyFile(join(facts.root, rel), target).catch(() => undefined);
  }
  if (untracked.length > 0)
    kept.push(`${untracked.length} new file(s) in ${paths.relDir}/recovered/${runId}/untracked/`);
  return kept.length > 0 ? `its work is kept: ${kept.join(', ')}` : null;
}
