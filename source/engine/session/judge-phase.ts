import { homedir } from 'node:os';
import type { Git } from '../judge/git.js';
import {
  type GitSideState,
  readGitSideStateAgain,
  readGitSideStateOf,
  sideStateChange,
} from '../judge/git-side-state.js';
import {
  diffIgnored,
  type IgnoredSnapshot,
  ignoredBlindSpots,
  snapshotIgnored,
} from '../judge/ignored-files.js';
import type { StatusListing } from '../judge/ignored-listing.js';
import { type IndexCopy, keepIndexCopy } from '../judge/index-copy.js';
import { damagedObjects, type ObjectSnapshot, snapshotObjects } from '../judge/object-guard.js';
import {
  checkAndRestore,
  guardGitControlFiles,
  guardWorkspace,
  type ProtectedGuard,
} from '../judge/protected-files.js';
import { type RefsSnapshot, snapshotRefs } from '../judge/refs-guard.js';
import { configOriginFiles, type RepoFacts } from '../judge/repo.js';
import { type EffectiveScope, effectiveScope, type JudgeVerdict, judgeScope } from '../judge/scope-rules.js';
import type { StatMemo } from '../judge/stat-or-null.js';
import { computeTouchedSet, type TouchedFile, type TouchedSet } from '../judge/touched-set.js';
import { describeUnsafe, findUnsafeFiles } from '../judge/unsafe-files.js';
import type { BlastRadius } from '../protocol/report.js';
import type { Task, TaskKind } from '../protocol/task.js';
import { ignoredWatchSet } from '../sandbox/sandbox.js';
import { CONFIG_FILE_NAME } from '../workspace/paths.js';
import { isInsideDir, symlinkTarget } from '../workspace/safe-path.js';
import type { TickSetup } from './preflight.js';

/**
 * JUDGE (seed 000 §10, Appendix A4) from git reality. Guards are taken right before BUILD; after
 * it, protected files are compared and restored using the filesystem only, then git is asked.
 */

export interface BuildGuards {
  readonly gitGuard: ProtectedGuard;
  readonly workspaceGuard: ProtectedGuard;
  readonly ignoredBefore: IgnoredSnapshot;
  readonly sideBefore: GitSideState;
  /** `.git/index` right before BUILD (null when it cannot be used alone, e.g. a split index). */
  readonly indexBefore: IndexCopy | null;
  /** Issue 14: existing objects must be intact, refs are put back on STOP, new unsafe files refused. */
  readonly objectsBefore: ObjectSnapshot;
  readonly refsBefore: RefsSnapshot;
  /** Files whose inode changed after this instant were made by the tick (unsafe-files.ts). */
  readonly startedAtMs: number;
  /**
   * What the sandbox lets the tick's processes write in the tree (`writableInTree`, folders end in
   * `/`); null: anything. The judge's status pass and unsafe-files walk read only these (issue 17).
   */
  readonly writable: readonly string[] | null;
}

/**
 * Guards taken right before BUILD. `beforeWorkspace` runs between the other guards and the workspace
 * guard: the runner's own last write (INFLIGHT.json) lands there without looking like the builder's.
 * `workspaceSkip` names workspace files the builder may write (an external driver's output file).
 */
export async function takeBuildGuards(
  setup: TickSetup,
  env: NodeJS.ProcessEnv,
  beforeWorkspace: (guards: Omit<BuildGuards, 'workspaceGuard'>) => Promise<void>,
  workspaceSkip: readonly string[] = [],
  /** The run's own history folder, watched with the workspace (earlier runs are not). */
  historyRun: string | null = null,
  /** What the sandbox lets the run's processes write (`writableInTree`); null: anything. */
  writable: readonly string[] | null = null,
  /**
   * The ignored files of `writable`, pictured already (and when it began): before a prestarted
   * builder was started (tick/prestart-agents.ts), the one process of the tick that can write
   * before BUILD. What it makes from then on counts as the tick's (`startedAtMs`).
   */
  ignoredTaken: { readonly snapshot: IgnoredSnapshot; readonly atMs: number } | null = null,
): Promise<BuildGuards> {
  const { git, facts } = setup;
  // Independent reads of the tree as it is before BUILD, side by side. Nothing of the tick that
  // could write what they read runs meanwhile: a prestarted builder, in its sandbox, can write no
  // git or workspace file, and what it can write that git does not judge (ignored files) was
  // pictured before it started (`ignoredTaken`).
  const [gitGuard, index, ignoredBefore, objectsBefore, refsBefore] = await Promise.all([
    configOriginFiles(git, env.HOME ?? homedir()).then((origins) =>
      guardGitControlFiles(facts, origins, env),
    ),
    keepIndexCopy(facts.gitDir).then(async (kept) => ({
      indexBefore: kept,
      sideBefore: await readGitSideStateOf(git, kept),
    })),
    ignoredTaken?.snapshot ?? snapshotIgnoredFor(setup, writable),
    snapshotObjects(git, facts),
    snapshotRefs(facts),
  ]);
  const early = {
    gitGuard,
    sideBefore: index.sideBefore,
    ignoredBefore,
    indexBefore: index.indexBefore,
    objectsBefore,
    refsBefore,
    // A second of margin for filesystems whose timestamps lag the process clock.
    startedAtMs: Math.min(Date.now(), ignoredTaken?.atMs ?? Number.POSITIVE_INFINITY) - 1000,
    writable,
  };
  await beforeWorkspace(early);
  return { ...early, workspaceGuard: await guardWorkspace(setup.paths, workspaceSkip, historyRun) };
}

/** The ignored files the build guards watch, for a writable set (`writableInTree`). */
export function snapshotIgnoredFor(
  setup: TickSetup,
  writable: readonly string[] | null,
): Promise<IgnoredSnapshot> {
  return snapshotIgnored(setup.git, setup.paths.relDir, ignoredWatchSet(setup.sandbox, writable));
}

export interface JudgeOutcome {
  readonly touched: TouchedSet;
  readonly verdict: JudgeVerdict;
  readonly blast: BlastRadius;
  readonly blastLine: string;
  readonly notes: string[];
  /**
   * HEAD's commit as the judge read it, after the agent ended (null: no commit; undefined: not
   * read, the objects being damaged).
   */
  readonly headAfter?: string | null;
}

export function judgeTick(setup: TickSetup, guards: BuildGuards, task: Task): Promise<JudgeOutcome> {
  return judgeChanges(setup, guards, effectiveScopeFor(setup, task), task.task_kind);
}

/** A4 for any agent run the runner supervises: the tick's builder, or a workflow agent. */
export async function judgeChanges(
  setup: TickSetup,
  guards: BuildGuards,
  scope: EffectiveScope,
  taskKind: TaskKind,
): Promise<JudgeOutcome> {
  const { git, facts, paths } = setup;
  // Filesystem only, before any git command: undo planted config, hooks and workspace edits.
  const workspace = await checkAndRestore(guards.workspaceGuard, facts, paths);
  const gitControl = await checkAndRestore(guards.gitGuard, facts, paths);
  const notes = [...workspace.unrestorable, ...gitControl.unrestorable].map(
    (p) => `could not restore ${p} (no copy kept)`,
  );
  // Before git reads any object: a damaged one would make it fail or lie.
  const damaged = await damagedObjects(git, guards.objectsBefore);
  if (damaged.length > 0) return objectsDamaged(damaged, notes);
  // Reads that change nothing, side by side: HEAD's movement (refs only) runs beside the side
  // state and the status pass below, which write no ref; its verdict is awaited where it is used.
  const headMovedRead = headMovement(git, facts);
  headMovedRead.catch(() => undefined); // awaited below; a throw before then must not go unhandled
  const side = await readGitSideStateAgain(git, facts.gitDir, guards.sideBefore, guards.indexBefore);
  // One walk of each ignored folder serves both checks below (both read the tree as it is now).
  const walked: StatMemo = new Map();
  // Given the ignored paths of the judge's status pass, when it runs one (ignored-listing.ts).
  const ignored = (fromStatus: StatusListing | null) =>
    diffIgnored(git, paths.relDir, guards.ignoredBefore, { walked, sinceMs: guards.startedAtMs }, fromStatus);
  const hidden = sideStateChange(guards.sideBefore, side);
  const touched = await computeTouchedSet(
    git,
    facts.head,
    ignored,
    [...workspace.changes, ...gitControl.changes],
    // Flags of the index the judge starts from (before BUILD) and of the one git has now.
    [...new Set([...guards.sideBefore.flagged.keys(), ...side.flagged.keys()])],
    guards.indexBefore,
    guards.writable,
  );
  notes.push(...ignoredBlindSpots(guards.ignoredBefore));
  const unsafe = await findUnsafeFiles(facts.root, paths.dir, guards.startedAtMs, {
    walked,
    sandboxed: setup.sandbox.kind === 'bwrap',
    changed: touched.files.map((f) => f.path),
    within: guards.writable,
  });
  const { moved: headMoved, head: headAfter } = await headMovedRead;
  const verdict = judgeScope({
    files: touched.files,
    taskKind,
    scope,
    runnerOwnedGlobs: [CONFIG_FILE_NAME, paths.relDir, `${paths.relDir}/**`],
    escapingSymlinks: await escapingSymlinks(touched.files, facts, paths.dir),
    hiddenChanges: [
      ...hidden.newFlags.map((p) => `index flag (assume-unchanged or skip-worktree) set on ${p}`),
      ...hidden.newReplaceRefs.map((r) => `replace ref added: ${r}`),
    ],
    headMoved,
    unsafeFiles: unsafe.map(describeUnsafe),
  });
  const blast = blastRadius(touched.files);
  return { touched, verdict, blast, blastLine: blastRadiusLine(blast), notes, headAfter };
}

/**
 * Existing objects were changed: no diff, blob or tree of this repository can be trusted, so the
 * tick stops on that alone (the rollback still restores what it can and says what it could not).
 */
function objectsDamaged(damaged: string[], notes: string[]): JudgeOutcome {
  const blast = blastRadius([]);
  return {
    touched: { files: [], index: { file: '', env: {}, dispose: async () => undefined } },
    verdict: { code: 'STOP_GIT_OBJECT_CORRUPTED', violations: damaged, linesChanged: 0 },
    blast,
    blastLine: blastRadiusLine(blast),
    notes,
  };
}

/** The task's scope inside the config's fence, plus what the runner always forbids. */
export function effectiveScopeFor(setup: TickSetup, task: Task): EffectiveScope {
  const { config, paths } = setup;
  return effectiveScope(
    task,
    {
      allowed: config.scope.default_allowed_globs,
      forbidden: config.scope.default_forbidden_globs,
      lockfiles: config.scope.lockfiles,
      maxFiles: config.diff_limits.default_max_files_touched,
      maxLines: config.diff_limits.default_max_lines_changed,
    },
    ['.git', '.git/**', paths.relDir, `${paths.relDir}/**`],
  );
}

/**
 * A4 row 9: HEAD switched branch, or the branch no longer contains base_commit (`moved`, null when
 * it did not); and the commit HEAD names (null: none).
 */
async function headMovement(
  git: Git,
  facts: RepoFacts,
): Promise<{ moved: string | null; head: string | null }> {
  // Both facts in one process when HEAD names a commit; otherwise one question at a time.
  const both = await git.run(['rev-parse', 'HEAD^{commit}', '--symbolic-full-name', 'HEAD']);
  const [commit = '', name = ''] = both.stdout.toString('utf8').trim().split('\n');
  const quick = both.code === 0 && /^[0-9a-f]{40,64}$/.test(commit) && name !== '';
  const symbolic = quick ? null : await git.run(['symbolic-ref', '-q', 'HEAD']);
  const branchNow = symbolic
    ? symbolic.code === 0
      ? symbolic.stdout.toString('utf8').trim()
      : null
    : name === 'HEAD'
      ? null
      : name;
  const head = quick
    ? commit
    : (await git.run(['rev-parse', '--verify', '-q', 'HEAD^{commit}'])).stdout.toString('utf8').trim();
  const named = head === '' ? null : head;
  if (branchNow !== facts.branchRef) {
    const moved = `HEAD moved from ${facts.branchRef ?? 'a detached HEAD'} to ${branchNow ?? 'a detached HEAD'}`;
    return { moved, head: named };
  }
  if (!named) return { moved: 'HEAD no longer names a commit', head: null };
  if (named === facts.head) return { moved: null, head: named };
  const ancestor = await git.run(['merge-base', '--is-ancestor', facts.head, named]);
  return {
    moved:
      ancestor.code === 0
        ? null
        : `HEAD moved to ${named.slice(0, 12)}, which does not contain base_commit ${facts.head.slice(0, 12)}`,
    head: named,
  };
}

async function escapingSymlinks(
  files: readonly TouchedFile[],
  facts: RepoFacts,
  workspaceDir: string,
): Promise<string[]> {
  const out: string[] = [];
  for (const file of files) {
    if (file.source === 'protected' || file.status === 'deleted') continue;
    const target = await symlinkTarget(facts.root, file.path);
    if (target === null) continue;
    const inRepo = isInsideDir(target, facts.root);
    const inProtected =
      isInsideDir(target, facts.gitDir) ||
      isInsideDir(target, facts.commonDir) ||
      isInsideDir(target, workspaceDir);
    if (!inRepo || inProtected) out.push(`${file.path} -> ${target}`);
  }
  return out;
}

export function blastRadius(files: readonly TouchedFile[]): BlastRadius {
  return {
    files_touched: files.length,
    lines_added: files.reduce((sum, f) => sum + f.added, 0),
    lines_deleted: files.reduce((sum, f) => sum + f.deleted, 0),
    new_files: files.filter((f) => f.status === 'added').length,
  };
}

/**
 * Seed 000 §10: "<files_touched> files, +<lines_added>/-<lines_deleted>, <new_files> new", with
 * "1 file" in the singular (issue 16 item 8: "1 files" read as a bug).
 */
export function blastRadiusLine(b: BlastRadius): string {
  return `${b.files_touched} ${b.files_touched === 1 ? 'file' : 'files'}, +${b.lines_added}/-${b.lines_deleted}, ${b.new_files} new`;
}

export async function writeDiffPatch(
  git: Git,
  base: string,
  touched: TouchedSet,
  path: string,
): Promise<boolean> {
  // No judge index when the objects were damaged (objectsDamaged): there is no diff to keep.
  if (touched.index.file === '') return false;
  const result = await git.toFile(
    ['diff', '--cached', '--binary', '--no-renames', '--no-ext-diff', '--no-textconv', base],
    path,
    {
      env: touched.index.env,
    },
  );
  return result.code === 0;
}
