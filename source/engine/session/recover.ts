import { writeFileSync } from 'node:fs';
import { chmod, mkdir, readFile, rename, rm, rmdir, writeFile } from 'node:fs/promises';
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
import {
  fingerprintRowsFromNul,
  fingerprintRowsToNul,
  type Inflight,
  inflightAgentSchema,
  inflightSchema,
} from '../protocol/inflight.js';
import { endRecordedSandbox } from '../sandbox/end-sandbox.js';
import {
  processesMarkedByRunner,
  processStartTicks,
  runnerMark,
  signalEach,
  waitUntilDeadSync,
} from '../supervise/process-tree.js';
import { readJsonValidated, writeJsonAtomic } from '../workspace/atomic-write.js';
import type { WorkspacePaths } from '../workspace/paths.js';
import { isInsideDir } from '../workspace/safe-path.js';
import { keepRef, planRecovery, type RecoveryPlan, recoveredRef, unresolvedDetail } from './recovery-plan.js';

/**
 * Recovery from a run that was killed mid-tick (seed 001 PR2: "the next run still recovers
 * cleanly"). INFLIGHT.json says where the tick started. The next run, once it holds the lock,
 * ends the orphaned agent, restores every git config file (so nothing planted runs), then does
 * what recovery-plan.ts decides: the tick's own commits leave the branch (kept under
 * refs/relais/recovered/<run_id>), the user's never do, and when it cannot tell them apart it
 * stops and asks. Nothing is lost: tracked changes are kept as a patch and untracked or new
 * ignored files are moved, all under relais/recovered/<run_id>/. Changed ignored files cannot be
 * restored (no copy of them is kept on disk): they are listed and the next run is blocked until a
 * human looks.
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
    tick_head: null,
    flagged: Object.fromEntries(start.side.flagged),
    replace_refs: [...start.side.replaceRefs],
    ignored: [],
    ignored_inside: [],
    ignored_rows_nul: fingerprintRowsToNul(ignored.ignored, ignored.inside),
    ignored_unwatched: [...ignored.unwatched],
    ignored_names: [],
    ignored_names_nul: ignored.names.join('\0'),
    ignored_clock: ignored.clock,
    ignored_within: ignored.within ? [...ignored.within] : null,
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
  await writeJsonAtomic(agentFile(paths), agentSchema, {
    pgid,
    start_ticks: processStartTicks(pgid),
    runner_mark: runnerMark(),
  });
}

export function agentFile(paths: WorkspacePaths): string {
  return join(paths.dir, 'INFLIGHT.agent.json');
}

const agentSchema = inflightAgentSchema;

/** The commit the tick is about to put on the branch; a crash right after keeps exactly this one. */
export function recordCommitInFlight(paths: WorkspacePaths, commit: string): Promise<void> {
  return update(paths, (i) => ({ ...i, committed: commit }));
}

/** Where the tick last left the branch (see Inflight.tick_head). */
export function recordTickHead(paths: WorkspacePaths, head: string | null): Promise<void> {
  return update(paths, (i) => ({ ...i, tick_head: head }));
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
  | { kind: 'recovered'; notes: string[] }
  /** `notes` says what was moved aside before it stopped (always reported, issue 21 item 2). */
  | { kind: 'failed'; detail: string; notes: string[] };

export async function recoverInterruptedRun(
  git: Git,
  facts: RepoFacts,
  paths: WorkspacePaths,
): Promise<Recovery> {
  const read = await readJsonValidated(paths.inflight, inflightSchema);
  if (read.kind === 'missing') return { kind: 'none' };
  const inflight = read.kind === 'ok' && read.value.unresolved.length === 0 ? read.value : null;
  const notes: string[] = [];
  try {
    if (inflight) {
      const agent = await readJsonValidated(agentFile(paths), agentSchema);
      endOrphanedAgent(agent.kind === 'ok' ? agent.value : null);
      // Filesystem only, before any git command: planted config and hooks are undone first.
      await checkAndRestore(
        replayGuard({ roots: inflight.git_roots, files: inflight.git_files }, inflight.git_dir_identities),
        facts,
        paths,
      );
    }
    const outsideRestored = inflight ? await restoreOutsideConfig(inflight, facts, paths) : false;
    // Without the copy of the global config, recovery's own git ignores global and system config.
    const safeGit = outsideRestored
      ? git
      : git.withEnv({ GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' });
    const plan = await planRecovery(safeGit, paths);
    if (plan.kind === 'none') return { kind: 'none' };
    if (plan.kind === 'blocked') return { kind: 'failed', detail: plan.detail, notes };
    return await carryOut(safeGit, facts, paths, plan, notes);
  } catch (error) {
    const runId = read.kind === 'ok' ? read.value.run_id : '(unknown)';
    return {
      kind: 'failed',
      detail: `recovering interrupted run ${runId} failed: ${(error as Error).message}${notes.length > 0 ? `; before that: ${notes.join('; ')}` : ''}`,
      notes,
    };
  }
}

/**
 * The plan, done: the tick's own commits go under refs/relais/recovered/<run_id> (only when
 * nothing of the user's is on top of them), uncommitted changes become a patch, untracked and new
 * ignored files are moved under relais/recovered/<run_id>/. Every move is pushed to `notes` as it
 * happens, so a failure later still says where things went.
 */
async function carryOut(
  git: Git,
  facts: RepoFacts,
  paths: WorkspacePaths,
  plan: Extract<RecoveryPlan, { kind: 'recover' }>,
  notes: string[],
): Promise<Recovery> {
  const { inflight, branchTo } = plan;
  const keep = join(paths.recoveredDir, inflight.run_id);
  const keptRel = `${paths.relDir}/recovered/${inflight.run_id}`;
  await mkdir(keep, { recursive: true });
  if (plan.tickCommitsAt) {
    // Even the tick's own judged commit is not kept on the branch: a builder able to kill the
    // runner could also have edited INFLIGHT.json to vouch for its commit. A human decides.
    await git.ok(['update-ref', recoveredRef(inflight.run_id), plan.tickCommitsAt]);
    const judged = inflight.committed !== null && plan.tickCommitsAt === inflight.committed;
    notes.push(
      judged
        ? `the run had committed its judged change ${plan.tickCommitsAt.slice(0, 12)} just before it stopped; it is at ${recoveredRef(inflight.run_id)} (git merge --ff-only ${recoveredRef(inflight.run_id)} to keep it)`
        : `the run's unjudged commits were taken off the branch and are kept at ${recoveredRef(inflight.run_id)}`,
    );
  }
  const userFlags = await clearForRollback(git, {
    flagged: new Map(Object.entries(inflight.flagged)),
    replaceRefs: new Set(inflight.replace_refs),
  });
  const patch = await git.run(['diff', '--binary', '--no-ext-diff', '--no-textconv', branchTo]);
  if (patch.stdout.length > 0) {
    writeFileSync(join(keep, 'worktree.patch'), patch.stdout);
    notes.push(`uncommitted changes saved as ${keptRel}/worktree.patch (git apply it to get them back)`);
  }
  if (branchTo !== facts.head) await moveBranch(git, inflight, branchTo);
  await git.ok(['reset', '--hard', '-q', branchTo]);
  await restoreFlags(git, userFlags);
  const untracked = splitNul(await git.ok(['ls-files', '-z', '--others', '--exclude-standard']));
  await moveAside(facts.root, untracked, join(keep, 'untracked'));
  if (untracked.length > 0)
    notes.push(`${untracked.length} untracked path(s) moved to ${keptRel}/untracked/`);
  const ignored = await settleIgnored(git, facts, paths, inflight, join(keep, 'ignored'));
  if (ignored.moved > 0) notes.push(`${ignored.moved} new ignored path(s) moved to ${keptRel}/ignored/`);
  if (ignored.unresolved.length > 0) {
    const stuck = { ...inflight, unresolved: ignored.unresolved };
    await writeJsonAtomic(paths.inflight, inflightSchema, stuck);
    return { kind: 'failed', detail: `${unresolvedDetail(stuck, paths)}; ${notes.join('; ')}`, notes };
  }
  await git.run(['update-ref', '-d', keepRef(inflight.run_id)]);
  await clearInflight(paths);
  await rmdir(keep).catch(() => undefined); // only when nothing was kept in it
  const where =
    branchTo === inflight.base_commit
      ? `the branch is back on the run's base ${branchTo.slice(0, 12)}`
      : `the branch stays at ${branchTo.slice(0, 12)} with the ${plan.userCommits.length} commit(s) made after the run stopped (${plan.userCommits.slice(0, 5).join('; ')})`;
  notes.unshift(`recovered interrupted run ${inflight.run_id}: ${where}`);
  return { kind: 'recovered', notes };
}

async function moveBranch(git: Git, inflight: Inflight, to: string): Promise<void> {
  const message = 'relais: recover interrupted run';
  if (inflight.branch_ref) {
    await git.ok(['symbolic-ref', 'HEAD', inflight.branch_ref]);
    await git.ok(['update-ref', '-m', message, inflight.branch_ref, to]);
  } else {
    await git.ok(['update-ref', '--no-deref', '-m', message, 'HEAD', to]);
  }
}

/** New ignored files are moved aside; changed ones cannot be restored and are returned. */
async function settleIgnored(
  git: Git,
  facts: RepoFacts,
  paths: WorkspacePaths,
  inflight: Inflight,
  keep: string,
): Promise<{ moved: number; unresolved: string[] }> {
  // Rows as runs write them now, after the arrays an INFLIGHT.json of an older version holds.
  const rows = fingerprintRowsFromNul(inflight.ignored_rows_nul);
  const before = replayIgnored({
    ignored: [...inflight.ignored, ...rows.ignored],
    inside: [...inflight.ignored_inside, ...rows.inside],
    names: [
      ...inflight.ignored_names,
      ...(inflight.ignored_names_nul === '' ? [] : inflight.ignored_names_nul.split('\0')),
    ],
    unwatched: inflight.ignored_unwatched,
    clock: inflight.ignored_clock,
    within: inflight.ignored_within,
  });
  const changes = await diffIgnored(git, paths.relDir, before);
  const created = changes.filter((c) => c.change === 'created').map((c) => c.path);
  await moveAside(facts.root, created, keep);
  return {
    moved: created.length,
    unresolved: changes.filter((c) => c.change !== 'created').map((c) => c.path),
  };
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

/**
 * A builder (or verification) orphaned by the crash must not keep editing: its sandbox is ended,
 * and every process the killed runner started that is still alive (found by the mark it gave
 * them: a sandbox's init that missed its parent's death, a daemon that left the group).
 */
function endOrphanedAgent(
  agent: { pgid: number; start_ticks: string | null; runner_mark: string | null } | null,
): void {
  endRecordedSandbox(agent);
  if (agent?.runner_mark && agent.runner_mark !== runnerMark()) {
    const left = processesMarkedByRunner(agent.runner_mark);
    signalEach(left, 'SIGKILL');
    waitUntilDeadSync(left, 5000);
  }
}
