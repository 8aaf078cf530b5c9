import { lstat, readlink, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { Git } from '../judge/git.js';
import { type RepoFacts, readRepoFacts } from '../judge/repo.js';
import type { Code } from '../protocol/codes.js';
import type { RelaisConfig } from '../protocol/config.js';
import { inflightSchema } from '../protocol/inflight.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { readJsonValidated } from '../workspace/atomic-write.js';
import { loadConfig } from '../workspace/load-config.js';
import { type WorkspacePaths, workspacePaths } from '../workspace/paths.js';
import { brokenHeadDetail } from './recovery-plan.js';

/**
 * Rows 1-2 of seed 000 Appendix A1 (config, repository, workspace): what reading a project needs.
 * Apart from preflight.ts so that `relais status` loads this without the start conditions, the
 * sandbox probe and the agent checks it does not run (issue 17: start-up time).
 */

export interface Block {
  readonly code: Code;
  readonly detail: string;
}

export interface TickSetup {
  readonly config: RelaisConfig;
  readonly paths: WorkspacePaths;
  readonly git: Git;
  readonly facts: RepoFacts;
  /** The OS sandbox every agent and verification of this run goes through (issue 14). */
  readonly sandbox: Sandbox;
}

/**
 * The config loader, for readers such as `relais status` that take it from session/ (the layer
 * rule) without the barrel `session/index.ts`, which pulls in the agents' runners and recovery.
 */
export { loadConfig };

/** A setup without its sandbox: what reading a project needs (`relais status`), no bwrap probe. */
export type ProjectSetup = Omit<TickSetup, 'sandbox'>;

/** Rows 1-2 of A1: config, repository and workspace, without probing the sandbox. */
export async function loadProject(
  given: string,
  env: NodeJS.ProcessEnv,
  /**
   * Called as soon as git has named the repository's root, with the config if it is parsed by
   * then (else null): a caller may start its own work there. Never from the folder given: a
   * project in a subfolder of another repository is that repository's (red-team row 96).
   */
  onRepository?: (root: string, config: RelaisConfig | null) => void,
): Promise<{ ok: true; project: ProjectSetup } | { ok: false; block: Block; paths: null }> {
  // Every path the runner compares or prints derives from the real root, symlinks resolved.
  const root = await realpath(given).catch(() => given);
  // git reads the repository in its own process while this one parses the config (issue 17): the
  // rev-parse needs nothing from the config. Their verdicts are still taken in row order.
  const git = new Git(root, env);
  let parsed: RelaisConfig | null = null;
  const facts = readRepoFacts(git, root).then((read) => {
    if (read.ok) onRepository?.(read.facts.root, parsed);
    return read;
  });
  // Awaited only once the config has loaded: a failure there must not go unhandled meanwhile.
  facts.catch(() => undefined);
  // Row 1: relais.config.json missing or unreadable (a malformed file names the field).
  const loaded = await loadConfig(root, env);
  if (!loaded.ok) {
    const hint = loaded.problem === 'missing' ? ' (run `relais init` at the repository root)' : '';
    return {
      ok: false,
      block: { code: 'BLOCKED_MISSING_CONFIG', detail: loaded.detail + hint },
      paths: null,
    };
  }
  const config = loaded.config;
  parsed = config;
  const paths = workspacePaths(root, config.workspace_dir);
  // Row 2: not a git repository, or HEAD unreadable.
  const repo = await facts;
  if (!repo.ok) {
    // Issue 14: an unreadable HEAD after an interrupted tick is a recovery to finish, not a fresh repo.
    const broken = await interruptedRunDetail(paths, root);
    return broken
      ? { ok: false, block: { code: 'BLOCKED_CRASH_RECOVERY_REQUIRED', detail: broken }, paths: null }
      : { ok: false, block: { code: 'BLOCKED_MISSING_CONFIG', detail: repo.detail }, paths: null };
  }
  git.pin(repo.facts.gitDir, repo.facts.commonDir);
  // Not stat: a workspace that is a symlink (a cloned repository can ship one) would have the
  // runner write its state, reports and rescue copies wherever the link points.
  const workspace = await lstat(paths.dir).catch(() => null);
  if (workspace?.isSymbolicLink()) {
    return {
      ok: false,
      block: {
        code: 'BLOCKED_MISSING_CONFIG',
        detail: `workspace ${config.workspace_dir}/ is a symbolic link (to ${await readlink(paths.dir).catch(() => '?')}): the runner keeps its files inside the repository only. Remove the link (git rm ${config.workspace_dir}) and run \`relais init\``,
      },
      paths: null,
    };
  }
  if (!workspace?.isDirectory()) {
    return {
      ok: false,
      block: {
        code: 'BLOCKED_MISSING_CONFIG',
        detail: `workspace ${config.workspace_dir}/ does not exist; run \`relais init\``,
      },
      paths: null,
    };
  }
  return { ok: true, project: { config, paths, git, facts: repo.facts } };
}

async function interruptedRunDetail(paths: WorkspacePaths, root: string): Promise<string | null> {
  const inflight = await readJsonValidated(paths.inflight, inflightSchema);
  return inflight.kind === 'ok' ? brokenHeadDetail(inflight.value, paths, join(root, '.git')) : null;
}
