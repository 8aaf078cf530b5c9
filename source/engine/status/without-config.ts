import { readFile, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Git } from '../judge/git.js';
import { readRepoFacts } from '../judge/repo.js';
import { loadConfig } from '../session/load-project.js';
import { type WorkspacePaths, workspacePaths } from '../workspace/paths.js';

/**
 * A project whose relais.config.json exists but does not load (bad JSON, a wrong field): still a
 * repository with a workspace whose workflow, ledger, lock and reports can be read. The workspace
 * folder is the one the file names when that much of it reads, else the default.
 */
export async function projectWithoutConfig(
  given: string,
  env: NodeJS.ProcessEnv,
): Promise<{ problem: string; paths: WorkspacePaths; git: Git; commonDir: string } | null> {
  const root = await realpath(given).catch(() => given);
  const loaded = await loadConfig(root, env);
  if (loaded.ok || loaded.problem === 'missing') return null;
  const git = new Git(root, env);
  const repo = await readRepoFacts(git, root);
  if (!repo.ok) return null;
  git.pin(repo.facts.gitDir, repo.facts.commonDir);
  const paths = workspacePaths(root, await namedWorkspace(root));
  const workspace = await stat(paths.dir).catch(() => null);
  return workspace?.isDirectory()
    ? { problem: loaded.detail, paths, git, commonDir: repo.facts.commonDir }
    : null;
}

async function namedWorkspace(root: string): Promise<string> {
  try {
    const raw = JSON.parse(await readFile(join(root, 'relais.config.json'), 'utf8')) as {
      workspace_dir?: unknown;
    };
    const named = raw.workspace_dir;
    if (typeof named === 'string' && /^(?!\.{1,2}$)(?!\.git$)[A-Za-z0-9_.-]+$/.test(named)) return named;
  } catch {
    // Not JSON: the default folder.
  }
  return 'relais';
}
