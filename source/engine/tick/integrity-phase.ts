import { damagedObjects } from '../judge/object-guard.js';
import { describeUnsafe, findUnsafeFiles } from '../judge/unsafe-files.js';
import { type DiskIndex, diskIndex, fileStamps, judgedTree, rewrittenPaths } from '../judge/verified-tree.js';
import type { Code } from '../protocol/codes.js';
import type { BuildGuards } from '../session/judge-phase.js';
import type { TickContext } from './tick-context.js';

/**
 * Issue 14: the verdict is about the committed tree. Right before VERIFY the tree on disk must be
 * the judged tree (nothing wrote to it since JUDGE); right after, it must still be, and no unsafe
 * file or damaged object may have appeared (verification runs the builder's code). The tree that
 * passes is handed to the commit, which refuses to record any other.
 */

export interface TreeBeforeVerify {
  readonly judged: string;
  readonly onDisk: string;
  readonly stamps: ReadonlyMap<string, string>;
  /** Read again after verification, then disposed by the tick. */
  readonly disk: DiskIndex;
}

export async function treeBeforeVerify(ctx: TickContext): Promise<TreeBeforeVerify | null> {
  const index = ctx.record.judge?.touched.index;
  if (!index || index.file === '') return null;
  const git = ctx.setup.git;
  const disk = await diskIndex(git, index);
  return {
    judged: await judgedTree(git, index),
    onDisk: await disk.tree(),
    stamps: await fileStamps(git, index),
    disk,
  };
}

/** The STOP that verification's run earned on the integrity side, or null when all held. */
export async function checkIntegrityAfterVerify(
  ctx: TickContext,
  guards: BuildGuards,
  before: TreeBeforeVerify | null,
): Promise<{ code: Code; detail: string } | null> {
  const { git, facts, paths } = ctx.setup;
  const damaged = await damagedObjects(git, guards.objectsBefore);
  if (damaged.length > 0)
    return { code: 'STOP_GIT_OBJECT_CORRUPTED', detail: damaged.slice(0, 5).join('; ') };
  const index = ctx.record.judge?.touched.index;
  if (before && index) {
    if (before.onDisk !== before.judged)
      return {
        code: 'STOP_TREE_CHANGED_DURING_VERIFY',
        detail: `before verification the tree on disk was ${short(before.onDisk)}, not the judged tree ${short(before.judged)}`,
      };
    const rewritten = rewrittenPaths(before.stamps, await fileStamps(git, index));
    if (rewritten.length > 0)
      return {
        code: 'STOP_TREE_CHANGED_DURING_VERIFY',
        detail: `rewritten during verification: ${rewritten.slice(0, 5).join(', ')}`,
      };
    const after = await before.disk.tree();
    if (after !== before.judged)
      return {
        code: 'STOP_TREE_CHANGED_DURING_VERIFY',
        detail: `after verification the tree on disk was ${short(after)}, not the judged and verified tree ${short(before.judged)}`,
      };
  }
  // The tick's checks run in the sandbox whenever it is on (verify-phase.ts).
  const unsafe = await findUnsafeFiles(facts.root, paths.dir, guards.startedAtMs, {
    sandboxed: ctx.setup.sandbox.kind === 'bwrap',
  });
  if (unsafe.length > 0)
    return {
      code: 'STOP_SCOPE_VIOLATION_FORBIDDEN',
      detail: `verification left ${unsafe.slice(0, 5).map(describeUnsafe).join('; ')}`,
    };
  return null;
}

const short = (tree: string) => tree.slice(0, 12);
