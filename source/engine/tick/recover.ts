import { writeFileSync } from 'node:fs';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { type Git, splitNul } from '../judge/git.js';
import { clearForRollback, type GitSideState, restoreFlags } from '../judge/git-side-state.js';
import {
  diffIgnored,
  type IgnoredSnapshot,
  replayIgnored,
  serializeIgnored,
} from '../judge/ignored-files.js';
import { checkAndRestore, type ProtectedGuard } from '../judge/protected-files.js';
import type { RepoFacts } from '../judge/repo.js';
import { type RecordedGuard, recordGuard, replayGuard } from '../judge/serialize-guard.js';
import { type Inflight, inflightAgentSchema, inflightSchema } from '../protocol/inflight.js';
import { endRecordedSandbox } from '../sandbox/end-sandbox.js';
import { processStartTicks } from '../supervise/process-tree.js';
import { readJsonValidated, writeJsonAtomic } from '../workspace/atomic-write.js';
import type { WorkspacePaths } from '../workspace/paths.js';
import { isInsideDir } from '../workspace/safe-path.js';

/**
 * Recovery from a run that was killed mid-tick (seed 001 PR2: "the next run still recovers
 * cleanly"). INFLIGHT.json says where the tick started. The next run, once it holds the lock,
 * ends the orphaned agent, restores every git config file (so nothing planted runs), and puts the
 * branch and the tree back on base_commit. Nothing is lost: commits made since are kept under
 * refs/relais/recovered/<run_id>, tracked changes as a patch and untracked or new ignored files
 * are moved, all under relais/recovered/<run_id>/. Changed ignored files cannot be restored (no
 * copy of them is kept on disk): they are listed and the next run is blocked until a human looks.
 */

export interface InflightStart {
  readonly paths: WorkspacePaths;
  readonly facts: RepoFacts;
  readonly runId: string;
  readonly gitGuard: ProtectedGuard;
  readonly side: GitSideState;
  readonly ignored: IgnoredSnapshot;
  readonly env: NodeJS.ProcessEnv;
  readonly now: Date;
}

export async function markInflight(start: InflightStart): Promise<void> {
  const { facts } = start;
  const inRepoGit = (p: string) =>
    isInsideDir(p, facts.gitDir) || isInsideDir(p, facts.commonDir) || p === join(facts.root, '.git');
  const repoFiles = recordGuard(start.gitGuard, inRepoGit);
  const outside = recordGuard(start.gitGuard, (p) => !inRepoGit(p));
  const ignored = serializeIgnored(start.ignored);
  const inflight: Inflight = {
    run_id: start.runId,
    base_commit: facts.head,
    branch_ref: facts.branchRef,
    started_at: start.now.toISOString(),
    git_dir_identities: Object.fromEntries(start.gitGuard.identities),
    git_roots: repoFiles.roots,
    git_files: repoFiles.files,
    outside_config_file: await writeOutsideConfig(start.env, start.runId, outside),
    committed: null,
    flagged: Object.fromEntries(start.side.flagged),
    replace_refs: [...start.side.replaceRefs],
    ignored: ignored.ignored,
    ignored_inside: ignored.inside,
    ignored_unwatched: ignored.unwatched,
    unresolved: [],
  };
  await writeJsonAtomic(start.paths.inflight, inflightSchema, inflight);
}

/** ~/.gitconfig and friends may hold credentials: kept in the user's private state folder, 0600. */
async function writeOutsideConfig(
  env: NodeJS.ProcessEnv,
  runId: string,
  recorded: RecordedGuard,
): Promise<string | null> {
  const dir = join(env.XDG_STATE_HOME ?? join(env.HOME ?? homedir(), '.local', 'state'), 'relais');
  const path = join(dir, `inflight-${runId}.json`);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFile(path, JSON.stringify(recorded), { mode: 0o600 });
    await chmod(path, 0o600);
    return path;
  } catch {
    return null;
  }
}

async function update(paths: WorkspacePaths, change: (inflight: Inflight) => Inflight): Promise<void> {
  const read = await readJsonValidated(paths.inflight, inflightSchema);
  if (read.kind === 'ok') await writeJsonAtomic(paths.inflight, inflightSchema, change(read.value));
}

/**
 * The agent's process group, as soon as it exists, so an orphan of a crash can be ended. A file of
 * its own (the builder runs meanwhile, and INFLIGHT.json stays under the workspace guard); a
 * forged one could only make recovery end a process the builder could have ended itself.
 */
export async function recordAgentInFlight(paths: WorkspacePaths, pgid: number): Promise<void> {
  await writeJsonAtomic(agentFile(paths), agentSchema, { pgid, start_ticks: processStartTicks(pgid) });
}

export function agentFile(paths: WorkspacePaths): string {
  return join(paths.dir, 'INFLIGHT.agent.json');
}

const agentSchema = inflightAgentSchema;

/** The commit the tick is about to put on the branch; a crash right after keeps exactly this one. */
export function recordCommitInFlight(paths: WorkspacePaths, commit: string): Promise<void> {
  return update(paths, (i) => ({ ...i, committed: commit }));
}

export async function clearInflight(paths: WorkspacePaths): Promise<void> {
  const read = await readJsonValidated(paths.inflight, inflightSchema);
  if (read.kind === 'ok' && read.value.outside_config_file)
    await rm(read.value.outside_config_file, { force: true });
  await rm(agentFile(paths), { force: true });
  await rm(paths.inflight, { force: true });
}

export type Recovery =
  | { kind: 'none' }
  | { kind: 'recovered'; note: string }
  | { kind: 'failed'; detail: string };

export async function recoverInterruptedRun(
  git: Git,
  facts: RepoFacts,
  paths: WorkspacePaths,
): Promise<Recovery> {
  const read = await readJsonValidated(paths.inflight, inflightSchema);
  if (read.kind === 'missing') return { kind: 'none' };
  if (read.kind === 'invalid')
    return { kind: 'failed', detail: `${paths.relDir}/INFLIGHT.json: ${read.reason}` };
  const inflight = read.value;
  if (inflight.unresolved.length > 0) return { kind: 'failed', detail: unresolvedDetail(inflight, paths) };
  try {
    const agent = await readJsonValidated(agentFile(paths), agentSchema);
    endOrphanedAgent(agent.kind === 'ok' ? agent.value : null);
    // Filesystem only, before any git command: planted config and hooks are undone first.
    await checkAndRestore(
      replayGuard({ roots: inflight.git_roots, files: inflight.git_files }, inflight.git_dir_identities),
      facts,
      paths,
    );
    const outsideRestored = await restoreOutsideConfig(inflight, facts, paths);
    // Without the copy of the global config, recovery's own git ignores global and system config.
    const safeGit = outsideRestored
      ? git
      : git.withEnv({ GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' });
    return await rollBackInterrupted(safeGit, facts, paths, inflight);
  } catch (error) {
    return {
      kind: 'failed',
      detail: `recovering interrupted run ${inflight.run_id} failed: ${(error as Error).message}`,
    };
  }
}

async function rollBackInterrupted(
  git: Git,
  facts: RepoFacts,
  paths: WorkspacePaths,
  inflight: Inflight,
): Promise<Recovery> {
  const head = (await git.run(['rev-parse', '--verify', '-q', 'HEAD^{commit}'])).stdout
    .toString('utf8')
    .trim();
  const keep = join(paths.recoveredDir, inflight.run_id);
  await mkdir(keep, { recursive: true });
  const notes: string[] = [];
  if (head && head !== inflight.base_commit) {
    // Commits made since (by the builder, or by hand after the crash) stay reachable.
    // Even the tick's own judged commit is not kept on the branch: a builder able to kill the
    // runner could also have edited INFLIGHT.json to vouch for its commit. A human decides.
    await git.ok(['update-ref', `refs/relais/recovered/${inflight.run_id}`, head]);
    const judged = inflight.committed !== null && head === inflight.committed;
    notes.push(
      judged
        ? `the run had committed its judged change ${head.slice(0, 12)} just before it stopped; it is at refs/relais/recovered/${inflight.run_id} (git merge --ff-only refs/relais/recovered/${inflight.run_id} to keep it)`
        : `commits made since base are kept at refs/relais/recovered/${inflight.run_id}`,
    );
  }
  const userFlags = await clearForRollback(git, {
    flagged: new Map(Object.entries(inflight.flagged)),
    replaceRefs: new Set(inflight.replace_refs),
  });
  const patch = await git.run(['diff', '--binary', '--no-ext-diff', '--no-textconv', inflight.base_commit]);
  if (patch.stdout.length > 0) writeFileSync(join(keep, 'worktree.patch'), patch.stdout);
  if (inflight.branch_ref) {
    await git.ok(['symbolic-ref', 'HEAD', inflight.branch_ref]);
    await git.ok([
      'update-ref',
      '-m',
      'relais: recover interrupted run',
      inflight.branch_ref,
      inflight.base_commit,
    ]);
  } else {
    await git.ok([
      'update-ref',
      '--no-deref',
      '-m',
      'relais: recover interrupted run',
      'HEAD',
      inflight.base_commit,
    ]);
  }
  await git.ok(['reset', '--hard', '-q', inflight.base_commit]);
  await restoreFlags(git, userFlags);
  await moveAside(
    facts.root,
    splitNul(await git.ok(['ls-files', '-z', '--others', '--exclude-standard'])),
    join(keep, 'untracked'),
  );
  const unresolved = await settleIgnored(git, facts, paths, inflight, join(keep, 'ignored'));
  if (unresolved.length > 0) {
    const stuck = { ...inflight, unresolved };
    await writeJsonAtomic(paths.inflight, inflightSchema, stuck);
    return { kind: 'failed', detail: unresolvedDetail(stuck, paths) };
  }
  await clearInflight(paths);
  const kept = `${paths.relDir}/recovered/${inflight.run_id}/`;
  return {
    kind: 'recovered',
    note: [
      `rolled back interrupted run ${inflight.run_id} to ${inflight.base_commit.slice(0, 12)}; its changes are kept in ${kept}`,
      ...notes,
    ].join('; '),
  };
}

/** New ignored files are moved aside; changed ones cannot be restored and are returned. */
async function settleIgnored(
  git: Git,
  facts: RepoFacts,
  paths: WorkspacePaths,
  inflight: Inflight,
  keep: string,
): Promise<string[]> {
  const before = replayIgnored(inflight.ignored, inflight.ignored_inside, inflight.ignored_unwatched);
  const changes = await diffIgnored(git, paths.relDir, before);
  await moveAside(
    facts.root,
    changes.filter((c) => c.change === 'created').map((c) => c.path),
    keep,
  );
  return changes.filter((c) => c.change !== 'created').map((c) => c.path);
}

function unresolvedDetail(inflight: Inflight, paths: WorkspacePaths): string {
  const list = inflight.unresolved.slice(0, 10).join(', ');
  return `interrupted run ${inflight.run_id} changed ignored files that cannot be restored: ${list}. Restore them (e.g. reinstall dependencies), then delete ${paths.relDir}/INFLIGHT.json`;
}

async function moveAside(root: string, relPaths: readonly string[], into: string): Promise<void> {
  for (const rel of relPaths) {
    const target = join(into, rel);
    await mkdir(dirname(target), { recursive: true });
    await rename(join(root, rel), target).catch(() => undefined);
  }
}

async function restoreOutsideConfig(
  inflight: Inflight,
  facts: RepoFacts,
  paths: WorkspacePaths,
): Promise<boolean> {
  if (!inflight.outside_config_file) return false;
  let recorded: RecordedGuard;
  try {
    recorded = JSON.parse(await readFile(inflight.outside_config_file, 'utf8')) as RecordedGuard;
  } catch {
    return false;
  }
  await checkAndRestore(replayGuard(recorded), facts, paths);
  return true;
}

/** A builder (or verification) orphaned by the crash must not keep editing: its sandbox is ended. */
function endOrphanedAgent(agent: { pgid: number; start_ticks: string | null } | null): void {
  endRecordedSandbox(agent);
}
