import { homedir } from 'node:os';
import {
  checkAndRestore,
  guardGitControlFiles,
  guardWorkspace,
  type ProtectedGuard,
} from '../judge/protected-files.js';
import { configOriginFiles } from '../judge/repo.js';
import { type WorkspacePaths, workspacePaths } from '../workspace/paths.js';
import type { CycleContext } from './context.js';

/**
 * What an implementer, or a test run of stage 1, must not change (the tick engine's guards,
 * judge/protected-files.ts): the runner workspace (`relais/`: STATE.json, the plan the verifier
 * reads back, notifications), relais.config.json, and git's control files (config, hooks, info).
 * The guards are taken right before the run; right after it, using the filesystem only and before
 * any git command, every change is restored and reported, and the caller fails what ran.
 */

export interface CycleGuards {
  readonly paths: WorkspacePaths;
  readonly guards: readonly ProtectedGuard[];
}

/** `runnerWrites`: files the runner itself writes while the run goes on (a verification log). */
export async function takeCycleGuards(
  ctx: CycleContext,
  runnerWrites: readonly string[] = [],
): Promise<CycleGuards> {
  const paths = workspacePaths(ctx.root, ctx.config.workspace_dir);
  const origins = await configOriginFiles(ctx.git, ctx.env.HOME ?? homedir());
  // The workspace guard watches relais.config.json too. Inside `ralphy start`, the workflow names what it writes meanwhile (its state, an abort request).
  const workspace = await guardWorkspace(paths, [...(ctx.runnerWrites ?? []), ...runnerWrites]);
  const git = await guardGitControlFiles(ctx.facts, origins, ctx.env);
  return { paths, guards: [workspace, git] };
}

export interface GuardReport {
  /** `path (modified)`, repository-relative where the path is inside it; every one was restored. */
  readonly changed: string[];
  /** Changed paths whose content was not kept (history), left as they are. */
  readonly unrestorable: string[];
}

export async function restoreGuarded(ctx: CycleContext, taken: CycleGuards): Promise<GuardReport> {
  const changed: string[] = [];
  const unrestorable: string[] = [];
  for (const guard of taken.guards) {
    const found = await checkAndRestore(guard, ctx.facts, taken.paths);
    changed.push(...found.changes.map((c) => `${c.display} (${c.change})`));
    unrestorable.push(...found.unrestorable);
  }
  return { changed, unrestorable };
}

/** One line for failures and notifications. */
export function describeGuarded(report: GuardReport): string {
  return `${report.changed.join(', ')}${report.unrestorable.length ? `; not restorable: ${report.unrestorable.join(', ')}` : ''}`;
}
