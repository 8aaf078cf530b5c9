import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { Git } from '../judge/git.js';
import { scratchPrefix } from '../sandbox/leftover-scratch.js';

/**
 * What an agent call did to the worktree, as git objects: the tree of the worktree before and
 * after the call (tracked and untracked files, ignored ones and the runner's relais/ left out),
 * and a binary diff between the two. A replay on a re-created checkout applies the diff, once it
 * has checked the tree it starts from is the one the call started from.
 *
 * The trees are written through a temporary index (a copy of the real one, so unchanged files are
 * not hashed again): the repository's own index and HEAD are never touched.
 */

/** The runner-owned folder: what the runner writes while an agent runs is not the agent's change. */
const RUNNER_DIR = 'relais';

/** Above this a change is not kept: the call is not durable and runs again after a kill. */
export const MAX_CHANGE_BYTES = 64 * 1024 * 1024;

export interface WorkTree {
  readonly git: Git;
}

/** The worktree `cwd` belongs to, or null outside a git worktree (then no call there is durable). */
export async function workTreeOf(cwd: string, env: NodeJS.ProcessEnv): Promise<WorkTree | null> {
  const found = await new Git(cwd, env).run(['rev-parse', '--show-toplevel']);
  if (found.code !== 0) return null;
  return { git: new Git(found.stdout.toString('utf8').trim(), env) };
}

/** The worktree's content as a tree object id (written to the object store). */
export async function treeOf(tree: WorkTree): Promise<string> {
  const { git } = tree;
  const scratch = await mkdtemp(join(tmpdir(), scratchPrefix('tree')));
  const index = join(scratch, 'index');
  try {
    const real = await git.text(['rev-parse', '--git-path', 'index']);
    await copyFile(isAbsolute(real) ? real : join(git.root, real), index).catch(() => undefined);
    const env = { GIT_INDEX_FILE: index };
    // No pathspec on add: naming a folder git ignores (relais/ usually is) makes it fail.
    await git.ok(['add', '-A'], { env });
    await git.ok(['rm', '-r', '-q', '--cached', '--ignore-unmatch', '--', RUNNER_DIR], { env });
    return await git.text(['write-tree'], { env });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** The binary diff from one tree to another; null when it is above MAX_CHANGE_BYTES. */
export async function changeBetween(tree: WorkTree, before: string, after: string): Promise<Buffer | null> {
  if (before === after) return Buffer.alloc(0);
  const diff = await tree.git.run(['diff', '--binary', '--no-renames', '--no-ext-diff', before, after], {
    maxStdoutBytes: MAX_CHANGE_BYTES,
  });
  if (diff.code !== 0) return null;
  return diff.stdout;
}

/**
 * Applies a recorded change to the worktree and checks it lands on the recorded tree. `git apply`
 * applies all of a patch or none of it, so a change that does not apply leaves the tree as it was.
 */
export class ChangeNotApplied extends Error {}

export async function applyChange(tree: WorkTree, change: Buffer, expected: string): Promise<void> {
  if (change.length > 0) {
    const applied = await tree.git.run(['apply', '--binary', '--whitespace=nowarn', '-'], { stdin: change });
    if (applied.code !== 0)
      throw new ChangeNotApplied(`the kept change does not apply: ${applied.stderr.split('\n')[0] ?? ''}`);
  }
  const now = await treeOf(tree);
  if (now !== expected)
    throw new Error(
      `the replayed change left tree ${now.slice(0, 12)}, not the recorded ${expected.slice(0, 12)}`,
    );
}
