import { readdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, sep } from 'node:path';
import type { WorkspacePaths } from '../workspace/paths.js';
import {
  diffSnapshot,
  displayPath,
  type FsChange,
  type FsSnapshot,
  restoreSnapshot,
  type SnapshotRoot,
  takeSnapshot,
} from './fs-snapshot.js';
import type { RepoFacts } from './repo.js';

/**
 * What git cannot show but a builder must not touch (seed 000 F006): the runner workspace (excluded
 * from git), the repository's own control files (config, hooks, info, alternates) and every git
 * config file outside the repository that git reads. Any change is restored before the runner's
 * next git command, so a planted hook, fsmonitor, filter or include never runs.
 */

export type ProtectedKind = 'runner_owned' | 'git_internal' | 'git_config_outside';

export interface ProtectedChange extends FsChange {
  readonly kind: ProtectedKind;
  readonly display: string;
}

export interface ProtectedGuard {
  readonly roots: readonly SnapshotRoot[];
  readonly before: FsSnapshot;
}

/** Git's own control files and every config file git reads (checked again at rollback). */
export async function guardGitControlFiles(
  facts: RepoFacts,
  configOrigins: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<ProtectedGuard> {
  const roots = await gitControlRoots(facts, configOrigins, env);
  return { roots, before: await takeSnapshot(roots) };
}

/**
 * The runner workspace. Separate from the git guard because the runner itself writes there after
 * judging (reports, history), so it is checked once, right after the builder returns.
 */
export async function guardWorkspace(paths: WorkspacePaths): Promise<ProtectedGuard> {
  // History can be large and is only ever appended to: fingerprint it, keep the bytes of the rest.
  const roots: SnapshotRoot[] = [
    { path: paths.dir, recursive: true, keepContent: (p) => !isInside(p, paths.historyDir) },
  ];
  return { roots, before: await takeSnapshot(roots) };
}

/** Finds changes, puts everything back, and says what changed and what could not be restored. */
export async function checkAndRestore(
  guard: ProtectedGuard,
  facts: RepoFacts,
  paths: WorkspacePaths,
): Promise<{ changes: ProtectedChange[]; unrestorable: string[] }> {
  const raw = await diffSnapshot(guard.before, guard.roots);
  if (raw.length === 0) return { changes: [], unrestorable: [] };
  const unrestorable = await restoreSnapshot(guard.before, raw);
  const changes = raw.map((c) => ({
    ...c,
    kind: classify(c.path, facts, paths),
    display: displayPath(facts.root, c.path),
  }));
  return { changes, unrestorable: unrestorable.map((p) => displayPath(facts.root, p)) };
}

function classify(path: string, facts: RepoFacts, paths: WorkspacePaths): ProtectedKind {
  if (isInside(path, paths.dir)) return 'runner_owned';
  if (isInside(path, facts.gitDir) || isInside(path, facts.commonDir)) return 'git_internal';
  return 'git_config_outside';
}

function isInside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir + sep);
}

async function gitControlRoots(
  facts: RepoFacts,
  configOrigins: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<SnapshotRoot[]> {
  const always = () => true;
  const file = (path: string): SnapshotRoot => ({ path, recursive: false, keepContent: always });
  const tree = (path: string): SnapshotRoot => ({ path, recursive: true, keepContent: always });
  const common = facts.commonDir;
  const roots: SnapshotRoot[] = [
    file(join(common, 'config')),
    file(join(facts.gitDir, 'config.worktree')),
    tree(join(common, 'hooks')),
    tree(join(common, 'info')),
    file(join(common, 'objects', 'info', 'alternates')),
  ];
  for (const module of await readdir(join(common, 'modules')).catch(() => [] as string[])) {
    roots.push(
      file(join(common, 'modules', module, 'config')),
      tree(join(common, 'modules', module, 'hooks')),
    );
  }
  const outside = new Set([...configOrigins, ...defaultConfigFiles(env)]);
  for (const path of outside) {
    if (!isInside(path, common) && !isInside(path, facts.gitDir)) roots.push(file(path));
  }
  return dedupe(roots);
}

/** Where git looks for global and system config even when the file does not exist yet. */
function defaultConfigFiles(env: NodeJS.ProcessEnv): string[] {
  const home = env.HOME ?? homedir();
  const xdg = env.XDG_CONFIG_HOME ?? join(home, '.config');
  const files = [join(home, '.gitconfig'), join(xdg, 'git', 'config'), '/etc/gitconfig'];
  if (env.GIT_CONFIG_GLOBAL) files.push(env.GIT_CONFIG_GLOBAL);
  if (env.GIT_CONFIG_SYSTEM) files.push(env.GIT_CONFIG_SYSTEM);
  return files;
}

function dedupe(roots: SnapshotRoot[]): SnapshotRoot[] {
  const byPath = new Map<string, SnapshotRoot>();
  for (const root of roots) if (!byPath.has(root.path)) byPath.set(root.path, root);
  return [...byPath.values()];
}
