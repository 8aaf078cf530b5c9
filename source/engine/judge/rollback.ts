import { existsSync } from 'node:fs';
import { rm, rmdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { WorkspacePaths } from '../workspace/paths.js';
import { type Git, splitNul } from './git.js';
import { clearForRollback, type GitSideState, restoreFlags } from './git-side-state.js';
import { diffIgnored, type IgnoredSnapshot, restoreIgnored } from './ignored-files.js';
import { checkAndRestore, type ProtectedGuard } from './protected-files.js';
import type { RepoFacts } from './repo.js';

/**
 * Seed 000 Appendix B: put the branch back on base_commit, reset tracked files, remove what the
 * tick created, then assert clean. Preflight proved the tree clean with no untracked files, so
 * every untracked path now present was created by this tick (builder or verification) and is
 * removed; ignored files are compared with their pre-build snapshot and restored.
 */

export interface RollbackResult {
  readonly clean: boolean;
  readonly notes: string[];
}

/**
 * Ignored files the runner's own verification changed (a linter's cache in node_modules/.cache,
 * tsc --incremental, jest): not the builder's doing, so they neither count against the rollback
 * nor are they put back (no copy was kept). Issue 21 item 1: a red test stays an ordinary verify
 * failure. `before` is the snapshot taken right before VERIFY; `builderPaths` what the judge saw
 * the builder change, which stays the builder's even if verification touched it too.
 */
export interface VerificationIgnored {
  readonly before: IgnoredSnapshot;
  readonly builderPaths: ReadonlySet<string>;
}

export interface RollbackInput {
  readonly git: Git;
  readonly facts: RepoFacts;
  readonly paths: WorkspacePaths;
  /** Git control files and config (the workspace guard was settled at judge time). */
  readonly gitGuard: ProtectedGuard;
  readonly ignoredBefore: IgnoredSnapshot;
  readonly sideBefore: GitSideState;
  readonly verification?: VerificationIgnored | null;
  /** Called once the branch is back on base_commit (the in-flight record learns it). */
  readonly onBranchReset?: () => Promise<void>;
}

export async function rollback(input: RollbackInput): Promise<RollbackResult> {
  const { git, facts } = input;
  const notes: string[] = [];
  // Protected files first: nothing planted may run during the git commands below.
  const restored = await checkAndRestore(input.gitGuard, facts, input.paths);
  for (const path of restored.unrestorable) notes.push(`could not restore ${path} (no copy kept)`);
  // Index flags would make reset --hard skip the very files a builder hid its edits in.
  const userFlags = await clearForRollback(git, input.sideBefore);

  if (facts.branchRef) {
    await git.ok(['symbolic-ref', 'HEAD', facts.branchRef]);
    // Issue 14: garbage written into the loose ref file makes every git command refuse the ref.
    if (await removeBrokenLooseRef(git, facts, facts.branchRef))
      notes.push(`${facts.branchRef} held no valid commit id; it was rewritten to base_commit`);
    await git.ok(['update-ref', '-m', 'relais: rollback', facts.branchRef, facts.head]);
  } else {
    await git.ok(['update-ref', '--no-deref', '-m', 'relais: rollback', 'HEAD', facts.head]);
  }
  await input.onBranchReset?.();
  await git.ok(['reset', '--hard', '-q', facts.head]);
  await restoreFlags(git, userFlags);
  await abandonSequencerState(git, facts);

  const untracked = splitNul(await git.ok(['ls-files', '-z', '--others', '--exclude-standard']));
  await removeCreated(facts.root, untracked);
  if (untracked.length > 0) notes.push(`removed ${untracked.length} untracked path(s) created by the tick`);

  const verificationOwn = await changedByVerification(git, input);
  const ignoredChanges = (await diffIgnored(git, input.paths.relDir, input.ignoredBefore)).filter(
    (c) => c.change === 'created' || !verificationOwn.has(c.path),
  );
  const lostIgnored = await restoreIgnored(facts.root, input.ignoredBefore, ignoredChanges);
  await removeEmptyParents(
    facts.root,
    ignoredChanges.filter((c) => c.change === 'created').map((c) => c.path),
  );
  for (const path of lostIgnored)
    notes.push(`ignored file ${path} changed and no copy was kept to restore it`);
  const leftByVerification = [...verificationOwn].filter((p) => existsSync(join(facts.root, p)));
  if (leftByVerification.length > 0)
    notes.push(
      `left ${leftByVerification.length} ignored file(s) as the runner's own verification changed them (tool caches, not the builder's): ${leftByVerification.slice(0, 5).join(', ')}`,
    );

  // Clean means clean: a file that could not be restored makes the rollback incomplete.
  const clean =
    lostIgnored.length + restored.unrestorable.length === 0 && (await isClean(input, verificationOwn));
  return { clean, notes };
}

/** Ignored paths changed during VERIFY and not by the builder (see VerificationIgnored). */
async function changedByVerification(git: Git, input: RollbackInput): Promise<Set<string>> {
  if (!input.verification) return new Set();
  const during = await diffIgnored(git, input.paths.relDir, input.verification.before);
  return new Set(during.map((c) => c.path).filter((p) => !input.verification?.builderPaths.has(p)));
}

/**
 * A loose ref file whose content is not a commit id (issue 14: a builder wrote garbage into
 * `.git/refs/heads/<branch>`) is deleted so update-ref can write it again; git itself refuses to
 * touch a broken ref. Returns whether it did.
 */
async function removeBrokenLooseRef(git: Git, facts: RepoFacts, ref: string): Promise<boolean> {
  const resolved = await git.run(['rev-parse', '--verify', '-q', `${ref}^{commit}`]);
  if (resolved.code === 0) return false;
  const loose = join(facts.commonDir, ref);
  if (!existsSync(loose)) return false;
  await rm(loose, { force: true });
  return true;
}

async function abandonSequencerState(git: Git, facts: RepoFacts): Promise<void> {
  // A builder may leave a rebase or cherry-pick half done; reset --hard does not end those.
  if (existsSync(join(facts.gitDir, 'rebase-merge')) || existsSync(join(facts.gitDir, 'rebase-apply'))) {
    await git.run(['rebase', '--quit']);
  }
  if (existsSync(join(facts.gitDir, 'sequencer'))) await git.run(['cherry-pick', '--quit']);
}

export async function removeCreated(root: string, relPaths: readonly string[]): Promise<void> {
  for (const rel of relPaths) await rm(join(root, rel), { recursive: true, force: true });
  await removeEmptyParents(root, relPaths);
}

/** Folders emptied by the removal go too (git does not track folders, but humans notice them). */
async function removeEmptyParents(root: string, relPaths: readonly string[]): Promise<void> {
  const folders = new Set<string>();
  for (const rel of relPaths) {
    for (
      let dir = dirname(rel.replace(/\/$/, ''));
      dir !== '.' && dir !== '/' && dir !== '';
      dir = dirname(dir)
    )
      folders.add(dir);
  }
  const deepestFirst = [...folders].sort((a, b) => b.split('/').length - a.split('/').length);
  for (const dir of deepestFirst) await rmdir(join(root, dir)).catch(() => undefined);
}

async function isClean(input: RollbackInput, verificationOwn: ReadonlySet<string>): Promise<boolean> {
  const { git, facts } = input;
  const status = await git.ok([
    'status',
    '--porcelain=v1',
    '-z',
    '--untracked-files=all',
    '--ignore-submodules=dirty',
  ]);
  const head = await git.text(['rev-parse', 'HEAD']);
  const ignoredLeft = (await diffIgnored(git, input.paths.relDir, input.ignoredBefore)).filter(
    (c) => !verificationOwn.has(c.path),
  );
  return status.length === 0 && head === facts.head && ignoredLeft.length === 0;
}
