import { damagedObjects, type ObjectSnapshot, snapshotObjects } from '../judge/object-guard.js';
import { changedRefs, type RefsSnapshot, restoreRefs, snapshotRefs } from '../judge/refs-guard.js';
import { describeUnsafe, findUnsafeFiles, removeUnsafeFiles } from '../judge/unsafe-files.js';
import { fileStamps, rewrittenPaths } from '../judge/verified-tree.js';
import { workspacePaths } from '../workspace/paths.js';
import type { CycleContext } from './context.js';

/**
 * Issue 14's git integrity for the cycle's commits, as the tick engine has it (judge/): around an
 * implementer run and around stage 1's checks, existing objects must stay intact, refs the run
 * created or moved are put back, and files git cannot judge (hard links, FIFOs, sockets, device
 * nodes) made by the run are removed. Around the checks the branch may not move either, and every
 * tracked file must hold still: the verdict is about the committed tree, and a file rewritten
 * while the tests ran (even put back) means they ran on other bytes.
 */

export interface IntegrityGuard {
  readonly objects: ObjectSnapshot;
  readonly refs: RefsSnapshot;
  readonly startedAtMs: number;
  /** Tracked files' identities (stage 1 only): a rewrite moves the inode's change time. */
  readonly stamps: ReadonlyMap<string, string> | null;
}

export interface IntegrityReport {
  /** Objects changed, replaced or removed: nothing can be trusted, a human must look. */
  readonly damaged: string[];
  /** Refs created, changed or deleted by the run, already put back. */
  readonly refs: string[];
  /** Unsafe files the run made, already removed. */
  readonly unsafe: string[];
  /** Tracked files rewritten while the checks ran (stage 1 only). */
  readonly rewritten: string[];
}

/**
 * Taken right before the run. `branchMayMove`: an implementer may commit on the branch itself
 * (the runner reads its commits); the checks may not.
 */
export async function takeIntegrityGuard(
  ctx: CycleContext,
  options: { readonly branchMayMove: boolean; readonly stamps: boolean },
): Promise<IntegrityGuard> {
  const refs = await snapshotRefs(ctx.facts);
  return {
    objects: await snapshotObjects(ctx.git, ctx.facts),
    refs: options.branchMayMove ? withoutBranch(refs, ctx) : refs,
    // A second of margin for filesystems whose timestamps lag the process clock.
    startedAtMs: Date.now() - 1000,
    stamps: options.stamps ? await fileStamps(ctx.git, { env: {} }) : null,
  };
}

/** Right after the run (after the control files were restored): what broke, with refs and unsafe files undone. */
export async function checkIntegrity(ctx: CycleContext, guard: IntegrityGuard): Promise<IntegrityReport> {
  // Before git reads anything else: a damaged object makes every later answer suspect.
  const damaged = await damagedObjects(ctx.git, guard.objects);
  const refs = await changedRefs(guard.refs, ctx.facts);
  if (refs.length > 0) await restoreRefs(guard.refs, ctx.facts);
  const workspace = workspacePaths(ctx.root, ctx.config.workspace_dir).dir;
  const unsafe = await findUnsafeFiles(ctx.root, workspace, guard.startedAtMs);
  await removeUnsafeFiles(ctx.root, unsafe);
  const rewritten = guard.stamps ? rewrittenPaths(guard.stamps, await fileStamps(ctx.git, { env: {} })) : [];
  return { damaged, refs, unsafe: unsafe.map(describeUnsafe), rewritten };
}

/** One line per kind of harm that was undone (refs, unsafe files), or null when none was. */
export function describeUndone(report: IntegrityReport): string | null {
  const parts = [
    ...(report.refs.length > 0 ? [`refs ${report.refs.slice(0, 5).join(', ')} (put back)`] : []),
    ...(report.unsafe.length > 0 ? [`${report.unsafe.slice(0, 5).join('; ')} (removed)`] : []),
  ];
  return parts.length > 0 ? parts.join('; ') : null;
}

/** The checked-out branch is the implementer's to move: left out of what is watched and restored. */
function withoutBranch(refs: RefsSnapshot, ctx: CycleContext): RefsSnapshot {
  const branch = ctx.facts.branchRef ? `${ctx.facts.commonDir}/${ctx.facts.branchRef}` : null;
  if (branch === null) return refs;
  const files = new Map([...refs.files].filter(([path]) => path !== branch));
  return { ...refs, files, owns: (path) => path !== branch && refs.owns(path) };
}
