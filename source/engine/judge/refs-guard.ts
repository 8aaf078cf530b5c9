import { type Dirent, readdirSync } from 'node:fs';
import { lstat, mkdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { linkedWorktreeNames, removeNewLinkedWorktrees } from './linked-worktrees.js';
import type { RepoFacts } from './repo.js';
import { readRegularFile, statOrNull } from './stat-or-null.js';

/**
 * Issue 14 "Git integrity": branches and tags the builder created, changed or deleted are put back
 * on any STOP. The snapshot is taken at the filesystem level (loose refs, packed-refs, a reftable
 * folder), so a ref file holding garbage, which git itself refuses to read or update, is restored
 * as well: restoring runs before the rollback's first git command.
 */

export interface RefsSnapshot {
  readonly roots: readonly string[];
  /** Absolute path -> content, for every ref storage file present at tick start. */
  readonly files: ReadonlyMap<string, Buffer>;
  /** Folders present at tick start: only folders the tick created are pruned. */
  readonly folders: ReadonlySet<string>;
  /** Which ref storage files this tick answers for (all of them, except in a linked worktree). */
  readonly owns: (path: string) => boolean;
  /** Linked worktrees registered at tick start (linked-worktrees.ts). */
  readonly worktrees?: ReadonlySet<string>;
}

export async function snapshotRefs(facts: RepoFacts): Promise<RefsSnapshot> {
  const roots = refRoots(facts);
  const owns = ownedRefs(facts);
  const files = new Map<string, Buffer>();
  const folders = new Set<string>();
  for (const path of listFiles(roots, folders).filter(owns)) {
    const content = readRegularFile(path);
    if (content) files.set(path, content);
  }
  return { roots, files, folders, owns, worktrees: await linkedWorktreeNames(facts) };
}

/** Ref storage files created, changed or deleted since the snapshot, relative to the git folder. */
export async function changedRefs(snapshot: RefsSnapshot, facts: RepoFacts): Promise<string[]> {
  const changed: string[] = [];
  const now = listFiles(snapshot.roots).filter(snapshot.owns);
  for (const path of now) {
    const before = snapshot.files.get(path);
    const content = readRegularFile(path);
    if (!before || !content || !before.equals(content)) changed.push(path);
  }
  const present = new Set(now);
  for (const path of snapshot.files.keys()) if (!present.has(path)) changed.push(path);
  return changed.map((p) => display(p, facts)).sort();
}

/** Puts every ref storage file back as it was; returns one note per file it had to fix. */
export async function restoreRefs(
  snapshot: RefsSnapshot,
  facts: RepoFacts,
  /** Refs the runner itself made since the snapshot (keep-aside.ts), e.g. `refs/relais/recovered/<run>`. */
  keep: readonly string[] = [],
  /** The workspace folder (`relais`), whose `worktrees/` holds the runner's own lanes. */
  workspaceDir = 'relais',
): Promise<string[]> {
  const notes: string[] = snapshot.worktrees
    ? await removeNewLinkedWorktrees(facts, snapshot.worktrees, workspaceDir)
    : [];
  const now = listFiles(snapshot.roots).filter(snapshot.owns);
  for (const path of now) {
    if (snapshot.files.has(path) || keep.includes(display(path, facts))) continue;
    await rm(path, { force: true });
    notes.push(`removed ref ${display(path, facts)} created by the tick`);
  }
  for (const [path, content] of snapshot.files) {
    const current = await readFile(path).catch(() => null);
    if (current?.equals(content)) continue;
    // A folder planted where the ref file was would make the write fail: it goes first.
    const stat = await lstat(path).catch(() => null);
    if (stat && !stat.isFile()) await rm(path, { recursive: true, force: true });
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, content);
    notes.push(`restored ref ${display(path, facts)} changed by the tick`);
  }
  await removeNewFolders(snapshot);
  return notes;
}

/**
 * In the main worktree the tick answers for every ref. In a linked worktree (a parallel lane,
 * issue 19) the shared refs also move under other lanes while this tick runs: the merge queue
 * fast-forwards the integration branch, other lanes' branches are made and removed, the runner
 * keeps work aside under refs/relais/. Restoring those would undo another lane's landed work, so a
 * lane answers only for its own per-worktree refs and the branch it has checked out. (Inside the
 * sandbox a lane's builder cannot write the shared refs at all: `.git` is read-only.)
 */
function ownedRefs(facts: RepoFacts): (path: string) => boolean {
  if (facts.gitDir === facts.commonDir) return () => true;
  const ownBranch = facts.branchRef ? join(facts.commonDir, facts.branchRef) : null;
  return (path) => path.startsWith(`${facts.gitDir}/`) || path === ownBranch;
}

function refRoots(facts: RepoFacts): string[] {
  const roots = new Set<string>();
  for (const dir of new Set([facts.commonDir, facts.gitDir])) {
    roots.add(join(dir, 'refs'));
    roots.add(join(dir, 'packed-refs'));
    roots.add(join(dir, 'reftable'));
  }
  return [...roots];
}

/**
 * Every file under the ref roots (a root may itself be a file: packed-refs). Synchronous on
 * purpose (issue 17): a repository with 10,000 loose refs (fetched branches, tags, until `git
 * pack-refs`) took 3 s of awaited lstat and readFile round trips per snapshot; one pass of these
 * calls takes about 0.1 s. The listing's own file types save an lstat per entry; where a
 * filesystem gives none, Node lstats each entry itself and the whole listing fails when one entry
 * goes meanwhile (a ref another lane deletes), so the folder is then listed by name and each
 * entry lstat'ed here, a vanished one skipped, as before.
 */
function listFiles(roots: readonly string[], folders = new Set<string>()): string[] {
  const out: string[] = [];
  const walk = (path: string, isDirectory: boolean): void => {
    if (!isDirectory) {
      out.push(path);
      return;
    }
    folders.add(path);
    for (const [name, isDir] of entriesOf(path)) walk(join(path, name), isDir);
  };
  for (const root of roots) {
    const stat = statOrNull(root);
    if (stat) walk(root, stat.isDirectory());
  }
  return out.sort();
}

/** A folder's entries and whether each is a folder; empty when the folder is gone or unreadable. */
function entriesOf(dir: string): Array<[string, boolean]> {
  try {
    return readdirSync(dir, { withFileTypes: true }).map((e: Dirent) => [e.name, e.isDirectory()]);
  } catch {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return [];
    }
    const found: Array<[string, boolean]> = [];
    for (const name of names) {
      const stat = statOrNull(join(dir, name));
      if (stat) found.push([name, stat.isDirectory()]);
    }
    return found;
  }
}

/** Folders the tick created under the ref roots, deepest first, once emptied by the restore. */
async function removeNewFolders(snapshot: RefsSnapshot): Promise<void> {
  const now = new Set<string>();
  listFiles(snapshot.roots, now);
  // Only empty folders go (rmdir), so another lane's new branch folder is never harmed.
  const created = [...now].filter((dir) => !snapshot.folders.has(dir));
  created.sort((a, b) => b.length - a.length);
  for (const dir of created) await rmdir(dir).catch(() => undefined);
}

function display(path: string, facts: RepoFacts): string {
  const base = path.startsWith(facts.gitDir) ? facts.gitDir : facts.commonDir;
  return relative(base, path) || path;
}
