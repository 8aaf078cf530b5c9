import { existsSync } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { findExecutable } from '../agents/find-executable.js';
import { Git } from '../judge/git.js';
import { type RepoFacts, readRepoFacts, worktreeStatus } from '../judge/repo.js';
import type { Code } from '../protocol/codes.js';
import type { RelaisConfig } from '../protocol/config.js';
import type { WorkspaceState } from '../protocol/state.js';
import {
  findCorruptRunnerFiles,
  listStaleTmpFiles,
  removeStaleTmpFiles,
} from '../workspace/crash-recovery.js';
import { folderSizeBytes } from '../workspace/history.js';
import { describeShortfall, reservationShortfalls } from '../workspace/ledger.js';
import { loadConfig } from '../workspace/load-config.js';
import { PROMPT_FILE_NAMES, type WorkspacePaths, workspacePaths } from '../workspace/paths.js';
import { readState } from '../workspace/state-store.js';

/**
 * Seed 000 Appendix A1, in priority order. Rows 1-2 (and the agent CLI check) need no lock and
 * are in `loadSetup`; the lock is row 3 (the caller's); rows 4-7 are `checkStartConditions`.
 * With `sideEffects: false` (`relais status --preflight`) nothing is deleted or written.
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
}

export type SetupResult =
  | { ok: true; setup: TickSetup }
  | { ok: false; block: Block; paths: WorkspacePaths | null };

export async function loadSetup(given: string, env: NodeJS.ProcessEnv): Promise<SetupResult> {
  // Every path the runner compares or prints derives from the real root, symlinks resolved.
  const root = await realpath(given).catch(() => given);
  // Row 1: relais.config.json missing or unreadable (a malformed file names the field).
  const loaded = await loadConfig(root);
  if (!loaded.ok) {
    const hint = loaded.problem === 'missing' ? ' (run `relais init` at the repository root)' : '';
    return {
      ok: false,
      block: { code: 'BLOCKED_MISSING_CONFIG', detail: loaded.detail + hint },
      paths: null,
    };
  }
  const config = loaded.config;
  const paths = workspacePaths(root, config.workspace_dir);
  // Row 2: not a git repository, or HEAD unreadable.
  const git = new Git(root, env);
  const repo = await readRepoFacts(git, root);
  if (!repo.ok)
    return { ok: false, block: { code: 'BLOCKED_MISSING_CONFIG', detail: repo.detail }, paths: null };
  git.pin(repo.facts.gitDir, repo.facts.commonDir);
  const workspace = await stat(paths.dir).catch(() => null);
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
  return { ok: true, setup: { config, paths, git, facts: repo.facts } };
}

export type StartCheck =
  | { ok: true; state: WorkspaceState; removedTmp: string[]; agentCommand: string }
  | { ok: false; block: Block; state: WorkspaceState | null };

/**
 * Rows 4-7, preceded by what a tick needs to start at all (its prompt files and the agent CLI);
 * those come after the lock so their BLOCKED.json can be written safely.
 */
export async function checkStartConditions(
  setup: TickSetup,
  sideEffects: boolean,
  env: NodeJS.ProcessEnv,
): Promise<StartCheck> {
  const { config, paths, git, facts } = setup;
  const needs = await startNeeds(setup, env);
  if (!needs.ok) return { ok: false, block: needs.block, state: null };
  // Row 4: dirty worktree (V1: always blocked), including an unfinished merge or rebase.
  const dirty = await dirtyDetail(git, facts, paths.relDir);
  if (dirty) return { ok: false, block: { code: 'BLOCKED_DIRTY_WORKTREE', detail: dirty }, state: null };
  // Row 5: history above its cap.
  const historyBytes = await folderSizeBytes(paths.historyDir);
  if (config.history.enabled && historyBytes > config.history.max_mb * 1024 * 1024) {
    const mb = (historyBytes / 1024 / 1024).toFixed(1);
    return {
      ok: false,
      block: {
        code: 'BLOCKED_HISTORY_CAP_CLEANUP_REQUIRED',
        detail: `${paths.relDir}/history holds ${mb} MB > history.max_mb ${config.history.max_mb}`,
      },
      state: null,
    };
  }
  // Row 6: crash artifacts. Stale temp files go; a corrupt runner-owned file blocks.
  const removedTmp = sideEffects ? await removeStaleTmpFiles(paths) : await listStaleTmpFiles(paths);
  if (config.runner.crash_cleanup.validate_runner_json_files) {
    const corrupt = await findCorruptRunnerFiles(paths);
    if (corrupt.length > 0) {
      const list = corrupt.map((c) => `${c.file}: ${c.reason}`).join('; ');
      const tmpNote =
        removedTmp.length > 0
          ? ` (${removedTmp.length} stale .tmp file(s) ${sideEffects ? 'removed' : 'present'})`
          : '';
      return {
        ok: false,
        block: { code: 'BLOCKED_CRASH_RECOVERY_REQUIRED', detail: `${list}${tmpNote}` },
        state: null,
      };
    }
  }
  const state = await readState(paths);
  if (state.kind !== 'ok') {
    const reason = state.kind === 'missing' ? 'missing' : state.reason;
    return {
      ok: false,
      block: { code: 'BLOCKED_CRASH_RECOVERY_REQUIRED', detail: `${paths.relDir}/STATE.json: ${reason}` },
      state: null,
    };
  }
  // Row 7: the milestone budget must cover one more worst-case tick.
  const shortfalls = reservationShortfalls(state.value, config);
  if (shortfalls.length > 0) {
    return {
      ok: false,
      block: {
        code: 'BLOCKED_BUDGET_EXHAUSTED',
        detail: `milestone ${state.value.milestone_id ?? '(none)'}: ${shortfalls.map(describeShortfall).join('; ')}`,
      },
      state: state.value,
    };
  }
  return { ok: true, state: state.value, removedTmp, agentCommand: needs.agentCommand };
}

async function startNeeds(
  setup: TickSetup,
  env: NodeJS.ProcessEnv,
): Promise<{ ok: true; agentCommand: string } | { ok: false; block: Block }> {
  const { config, paths } = setup;
  const root = setup.facts.root;
  const missingPrompts = PROMPT_FILE_NAMES.filter((name) => !existsSync(join(paths.promptsDir, name)));
  if (missingPrompts.length > 0) {
    return {
      ok: false,
      block: {
        code: 'BLOCKED_MISSING_CONFIG',
        detail: `missing prompt files in ${config.workspace_dir}/prompts: ${missingPrompts.join(', ')}; run \`relais init\``,
      },
    };
  }
  const agentCommand = await findExecutable(config.claude_code_cli.command, env, root);
  if (!agentCommand) {
    return {
      ok: false,
      block: {
        code: 'BLOCKED_AGENT_CLI_MISSING',
        detail: `claude_code_cli.command "${config.claude_code_cli.command}" was not found (PATH or path)`,
      },
    };
  }
  return { ok: true, agentCommand };
}

async function dirtyDetail(git: Git, facts: RepoFacts, workspaceRel: string): Promise<string | null> {
  for (const marker of ['MERGE_HEAD', 'rebase-merge', 'rebase-apply', 'CHERRY_PICK_HEAD', 'REVERT_HEAD']) {
    if (existsSync(join(facts.gitDir, marker)))
      return `an unfinished git operation is in progress (${marker}); finish or abort it`;
  }
  const entries = await worktreeStatus(git);
  if (entries.length === 0) return null;
  const paths = entries.map((e) => e.slice(3));
  if (paths.some((p) => p === `${workspaceRel}/` || p.startsWith(`${workspaceRel}/`))) {
    return `the ${workspaceRel}/ workspace is not excluded from git; run \`relais init\` to add it to .git/info/exclude`;
  }
  const shown = entries.slice(0, 10).map((e) => JSON.stringify(e));
  return `${entries.length} uncommitted or untracked path(s): ${shown.join(', ')}${entries.length > 10 ? ', …' : ''}`;
}
