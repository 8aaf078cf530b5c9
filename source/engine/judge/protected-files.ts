import { lstat, readdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join, sep } from 'node:path';
import { CONFIG_FILE_NAME, type WorkspacePaths } from '../workspace/paths.js';
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
  /** Folders whose identity (device and inode) must not change: a replaced .git cannot be restored. */
  readonly identities: ReadonlyMap<string, string | null>;
}

/** The git folder was swapped for another one: no git command may run in it any more. */
export class RepositoryReplacedError extends Error {}

/** Git's own control files and every config file git reads (checked again at rollback). */
export async function guardGitControlFiles(
  facts: RepoFacts,
  configOrigins: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<ProtectedGuard> {
  const roots = await gitControlRoots(facts, configOrigins, env);
  const identities = new Map<string, string | null>();
  for (const dir of [facts.gitDir, facts.commonDir]) identities.set(dir, await identityOf(dir));
  return { roots, before: await takeSnapshot(roots), identities };
}

async function identityOf(path: string): Promise<string | null> {
  const stat = await lstat(path).catch(() => null);
  return stat ? `${stat.dev}:${stat.ino}:${stat.isDirectory() ? 'dir' : 'other'}` : null;
}

/**
 * The runner workspace and the config. Separate from the git guard because the runner itself
 * writes in the workspace after judging (reports, history), so it is checked once, right after the
 * builder returns, and again after verification. The config is watched here whether git tracks it
 * or not: one kept out of git (ignored) is invisible to every git-based check, yet it draws every
 * later tick's fence, so a builder or a verification that widened it would widen them all.
 */
export async function guardWorkspace(
  paths: WorkspacePaths,
  skip: readonly string[] = [],
  /** The current run's history folder: the only one of history's runs that is watched. */
  historyRun: string | null = null,
): Promise<ProtectedGuard> {
  // History can be large and is only ever appended to: fingerprint it, keep the bytes of the rest.
  // Earlier runs' folders are not walked (issue 17: thousands of them made every tick slower);
  // what they hold is a record for humans, never read back to decide anything.
  const earlierRun = (p: string) =>
    isInside(p, paths.historyDir) &&
    p !== paths.historyDir &&
    !(historyRun !== null && isInside(p, historyRun));
  // `earlierRun` skips every entry of history's folder but the current run's, so the folder is not
  // listed (5,000 names read and dropped twice a tick, issue 17): the snapshot is the same.
  const currentRun =
    historyRun !== null && dirname(historyRun) === paths.historyDir ? [basename(historyRun)] : [];
  const kept = keptWork(paths);
  const roots: SnapshotRoot[] = [
    {
      path: paths.dir,
      recursive: true,
      keepContent: (p) => !isInside(p, paths.historyDir) && !kept.fingerprintOnly(p),
      // Files the runner itself writes while the agent runs (the caller names them) are skipped,
      // with their atomic-write temp files; nothing else in the workspace may change.
      skip: (p) => earlierRun(p) || kept.skip(p) || skip.some((s) => isInside(p, s) || isTempOf(p, s)),
      onlyNames: (dir) => (dir === paths.historyDir ? currentRun : null),
    },
    { path: paths.configFile, recursive: false, keepContent: () => true },
  ];
  return { roots, before: await takeSnapshot(roots), identities: new Map() };
}

/**
 * Two folders of the workspace hold work kept for people, which the runner reads back only to hand
 * it on (a lane's uncommitted files committed under refs/relais/recovered/lanes/ by `relais
 * worktrees prune`, a `worktree.patch` to apply by hand):
 * - the parallel lanes' worktrees (`worktrees/<lane>/`, parallel/lane-record.ts); a kept one stays
 *   after its workflow. A lane's runner state (its own workspace folder), its `.git` file and its
 *   config are watched like the rest of the workspace, with their bytes; its history (a copy of
 *   the main one, parallel/worktrees.ts) is a record only, skipped as earlier runs are;
 * - what recoveries and rollbacks set aside (`recovered/<run>/`, keep-aside.ts, recover.ts).
 * Their other files are fingerprinted, not read (issue 17: a kept lane of a 20,000-file repository
 * made every tick in the main worktree read all of it twice, 9.5 s of CPU instead of 0.6 s, and
 * 10,000 set-aside files 4.6 s): a change is still seen and stops the tick, it is not restored.
 * In the sandbox no role can write any of the workspace (it is bound read-only).
 */
function keptWork(paths: WorkspacePaths): {
  readonly skip: (path: string) => boolean;
  readonly fingerprintOnly: (path: string) => boolean;
} {
  const lanes = join(paths.dir, 'worktrees');
  const ws = basename(paths.dir);
  const watched = new Set([ws, '.git', CONFIG_FILE_NAME]);
  const inLane = (path: string): string[] | null =>
    path.startsWith(`${lanes}${sep}`) ? path.slice(lanes.length + 1).split(sep) : null;
  return {
    skip: (path) => {
      const parts = inLane(path);
      return parts !== null && parts[1] === ws && parts[2] === 'history' && parts.length > 3;
    },
    fingerprintOnly: (path) => {
      if (path.startsWith(`${paths.recoveredDir}${sep}`)) return true;
      const parts = inLane(path);
      return parts !== null && parts[1] !== undefined && !watched.has(parts[1]);
    },
  };
}

/** `STATE.json.1234.ab12cd.tmp`: the temp file atomic-write.ts writes before renaming it to `file`. */
function isTempOf(path: string, file: string): boolean {
  return path.startsWith(`${file}.`) && /\.\d+\.[0-9a-f]{6}\.tmp$/.test(path.slice(file.length));
}

/** Finds changes, puts everything back, and says what changed and what could not be restored. */
export async function checkAndRestore(
  guard: ProtectedGuard,
  facts: RepoFacts,
  paths: WorkspacePaths,
): Promise<{ changes: ProtectedChange[]; unrestorable: string[] }> {
  for (const [dir, identity] of guard.identities) {
    if ((await identityOf(dir)) !== identity) {
      throw new RepositoryReplacedError(
        `${displayPath(facts.root, dir)} was replaced by another folder during the tick; relais ran no git command in it. Restore your repository's git folder by hand.`,
      );
    }
  }
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
  if (isInside(path, paths.dir) || path === paths.configFile) return 'runner_owned';
  if (isInside(path, facts.gitDir) || isInside(path, facts.commonDir)) return 'git_internal';
  return 'git_config_outside';
}

function isInside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir + sep);
}

/**
 * Files at the top of a git folder that git itself rewrites during normal work. `packed-refs.new`
 * is the temp file of every packed-refs rewrite (`git branch -D` writes it, then renames it onto
 * `packed-refs`): in a parallel lane the merge queue removes another lane's branch while this
 * lane's builder runs, so the guard could see it exist at BUILD and be gone after, a STOP the
 * builder never caused, and putting it back would make git's next ref deletion fail (it is
 * created with O_EXCL). Git never reads it; the refs guard answers for the refs themselves.
 */
const VOLATILE = new Set([
  'index',
  'HEAD',
  'ORIG_HEAD',
  'FETCH_HEAD',
  'COMMIT_EDITMSG',
  'AUTO_MERGE',
  'packed-refs',
  'packed-refs.new',
  'description',
  'gc.pid',
  'gc.log',
]);
/** Written by a background `git gc` (update-server-info): housekeeping, not configuration. */
const isHousekeeping = (path: string) => basename(path) === 'refs' && basename(dirname(path)) === 'info';
const isVolatile = (name: string) =>
  VOLATILE.has(name) || name.endsWith('.lock') || /^(MERGE|CHERRY_PICK|REVERT|REBASE|BISECT)_/.test(name);
/** Control files that may not exist yet but would redirect or reconfigure git if created. */
const CONTROL_FILES = ['config', 'config.worktree', 'commondir', 'gitdir', 'shallow'];

async function gitControlRoots(
  facts: RepoFacts,
  configOrigins: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<SnapshotRoot[]> {
  const always = () => true;
  const file = (path: string): SnapshotRoot => ({ path, recursive: false, keepContent: always });
  const tree = (path: string): SnapshotRoot => ({
    path,
    recursive: true,
    keepContent: always,
    skip: isHousekeeping,
  });
  const roots: SnapshotRoot[] = [file(join(facts.root, '.git'))];
  for (const dir of new Set([facts.gitDir, facts.commonDir])) {
    // Every non-volatile file at the top (commondir, gitdir, config*, ...), existing or not.
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    const names = new Set([...CONTROL_FILES, ...entries.filter((e) => !e.isDirectory()).map((e) => e.name)]);
    for (const name of names) if (!isVolatile(name)) roots.push(file(join(dir, name)));
    roots.push(
      tree(join(dir, 'hooks')),
      tree(join(dir, 'info')),
      file(join(dir, 'objects', 'info', 'alternates')),
    );
  }
  for (const module of await readdir(join(facts.commonDir, 'modules')).catch(() => [] as string[])) {
    roots.push(
      file(join(facts.commonDir, 'modules', module, 'config')),
      tree(join(facts.commonDir, 'modules', module, 'hooks')),
    );
  }
  const outside = new Set([...configOrigins, ...defaultConfigFiles(env)]);
  for (const path of outside) {
    if (!isInside(path, facts.commonDir) && !isInside(path, facts.gitDir)) roots.push(file(path));
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
