import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Git } from '../judge/git.js';
import { type RepoFacts, worktreeStatus } from '../judge/repo.js';
import type { WorkspaceState } from '../protocol/state.js';
import {
  probeBwrap,
  resolveSandbox,
  SANDBOX_FIX,
  type Sandbox,
  sandboxSettings,
} from '../sandbox/sandbox.js';
import {
  findCorruptRunnerFiles,
  listStaleTmpFiles,
  removeStaleTmpFiles,
} from '../workspace/crash-recovery.js';
import { type HistoryListing, rotateHistory } from '../workspace/history.js';
import type { HistoryKnown } from '../workspace/history-tally.js';
import {
  capsReached,
  describeShortfall,
  type RunTotals,
  reservationShortfalls,
  runCapShortfalls,
} from '../workspace/ledger.js';
import { TICK_PROMPT_FILE_NAMES, type WorkspacePaths } from '../workspace/paths.js';
import { RESET_LEDGER, readState } from '../workspace/state-store.js';
import { missingAgentCommand } from './agent-check.js';
import { type Block, loadProject, type TickSetup } from './load-project.js';
import { planRecovery } from './recovery-plan.js';

/**
 * Seed 000 Appendix A1, in priority order. Rows 1-2 (and the agent CLI check) need no lock and
 * are in `loadSetup`; the lock is row 3 (the caller's); rows 4-7 are `checkStartConditions`.
 * With `sideEffects: false` (`relais status --preflight`) nothing is deleted or written.
 */

// Rows 1-2 live in load-project.ts, which `relais status` loads without the rest of this file.
export { type Block, loadProject, type ProjectSetup, type TickSetup } from './load-project.js';

export type SetupResult =
  | { ok: true; setup: TickSetup }
  | { ok: false; block: Block; paths: WorkspacePaths | null };

export async function loadSetup(given: string, env: NodeJS.ProcessEnv): Promise<SetupResult> {
  // The sandbox probe (memoized by root and PATH) starts as soon as git has named the root, while
  // the config may still be parsed: resolveSandbox below then finds it done or under way. From
  // git's root only, as resolveSandbox runs it (red-team row 96); wasted only where the config,
  // once read, turns the sandbox off.
  const loaded = await loadProject(given, env, (root, config) => {
    if (config === null || sandboxSettings(config).mode !== 'off')
      probeBwrap(env, root).catch(() => undefined);
  });
  if (!loaded.ok) return loaded;
  const { project } = loaded;
  const sandbox = await resolveSandbox(project.config, project.facts.root, env);
  return { ok: true, setup: { ...project, sandbox } };
}

export type StartCheck =
  | {
      ok: true;
      state: WorkspaceState;
      removedTmp: string[];
      /** History run folders deleted to stay under history.max_mb (oldest first). */
      prunedHistory: string[];
      /** What the rotation knows of history, kept in its tally when the tick ends (null: history off). */
      history: HistoryKnown | null;
    }
  | { ok: false; block: Block; state: WorkspaceState | null };

/**
 * Rows 4-7, preceded by what a tick needs to start at all (its prompt files and the agent CLI);
 * those come after the lock so their BLOCKED.json can be written safely.
 */
export async function checkStartConditions(
  setup: TickSetup,
  sideEffects: boolean,
  env: NodeJS.ProcessEnv,
  runCaps?: { readonly totals: RunTotals; readonly maxTicks: number | null },
  /**
   * Called once rows 1-4 have passed, before rows 5-7 are read: the tree is clean, so its config
   * is the committed one. What starts here (the orchestrator's CLI, tick/prestart-agents.ts) gets
   * nothing from a tick those rows refuse; it is ended unused.
   */
  treeClean?: () => void,
): Promise<StartCheck> {
  // A real run recovers an interrupted one before these rows; the preflight asks the same plan, so
  // `relais status --preflight` and `relais run` reach the same verdict (issue 21 item 3).
  const recovery = sideEffects ? null : await planRecovery(setup.git, setup.paths);
  if (recovery?.kind === 'blocked')
    return {
      ok: false,
      block: { code: 'BLOCKED_CRASH_RECOVERY_REQUIRED', detail: recovery.detail },
      state: null,
    };
  const needs = await startNeeds(setup, env);
  if (!needs.ok) return { ok: false, block: needs.block, state: null };
  const dirty = await dirtyRow(setup, sideEffects);
  if (dirty) return { ok: false, block: dirty, state: null };
  treeClean?.();
  const history = await historyRow(setup, sideEffects);
  if (history.block) return { ok: false, block: history.block, state: null };
  const crash = await crashRow(setup, sideEffects, history.listing);
  if (!crash.ok) return { ok: false, block: crash.block, state: null };
  const budget = budgetRow(setup, crash.state, runCaps);
  if (budget) return { ok: false, block: budget, state: crash.state };
  return {
    ok: true,
    state: crash.state,
    removedTmp: crash.removedTmp,
    prunedHistory: history.removed,
    history: history.known ?? null,
  };
}

/**
 * Row 4: dirty worktree (V1: always blocked), including an unfinished merge or rebase. A tree left
 * by an interrupted run is explained (seed 001): the next real run recovers it first, so a
 * side-effect-free check does not call it dirty.
 */
async function dirtyRow(setup: TickSetup, sideEffects: boolean): Promise<Block | null> {
  if (!sideEffects && existsSync(setup.paths.inflight)) return null;
  const dirty = await dirtyDetail(setup.git, setup.facts, setup.paths.relDir);
  return dirty ? { code: 'BLOCKED_DIRTY_WORKTREE', detail: dirty } : null;
}

/**
 * Row 5: history above its cap. The oldest runs are deleted until it fits (issue 17: history
 * rotates, never blocking); only a folder that cannot be deleted still blocks. Without side
 * effects nothing is deleted and nothing blocks: the next run would rotate.
 */
async function historyRow(
  { config, paths }: TickSetup,
  sideEffects: boolean,
): Promise<{ block: Block | null; removed: string[]; listing?: HistoryListing; known?: HistoryKnown }> {
  if (!config.history.enabled) return { block: null, removed: [] };
  const cap = config.history.max_mb * 1024 * 1024;
  const rotation = await rotateHistory(paths, cap, sideEffects);
  if (rotation.bytes <= cap || rotation.failed.length === 0)
    return { block: null, removed: rotation.removed, listing: rotation.listing, known: rotation.known };
  const mb = (rotation.bytes / 1024 / 1024).toFixed(1);
  return {
    block: {
      code: 'BLOCKED_HISTORY_CAP_CLEANUP_REQUIRED',
      detail: `${paths.relDir}/history holds ${mb} MB > history.max_mb ${config.history.max_mb} and ${rotation.failed.length} old run folder(s) could not be deleted: ${rotation.failed.slice(0, 3).join(', ')}`,
    },
    removed: rotation.removed,
  };
}

/** Row 6: crash artifacts. Stale temp files go; a corrupt runner-owned file blocks. */
async function crashRow(
  { config, paths }: TickSetup,
  sideEffects: boolean,
  /** History's folder as the rotation listed it, so thousands of runs are listed once a tick. */
  history: HistoryListing | undefined,
): Promise<{ ok: true; state: WorkspaceState; removedTmp: string[] } | { ok: false; block: Block }> {
  const removedTmp = sideEffects
    ? await removeStaleTmpFiles(paths, history)
    : await listStaleTmpFiles(paths, history);
  const corrupt = config.runner.crash_cleanup.validate_runner_json_files
    ? await findCorruptRunnerFiles(paths)
    : [];
  if (corrupt.length > 0) {
    // The ledger has its own fix; the other files are the runner's record of a run (restore or move aside).
    const list = corrupt
      .map((c) =>
        c.file === `${paths.relDir}/STATE.json`
          ? `${c.file}: ${c.reason} (restore a copy you trust, or run \`${RESET_LEDGER}\`: nothing else changes)`
          : `${c.file}: ${c.reason}`,
      )
      .join('; ');
    const tmpNote =
      removedTmp.length > 0
        ? ` (${removedTmp.length} stale .tmp file(s) ${sideEffects ? 'removed' : 'present'})`
        : '';
    return { ok: false, block: { code: 'BLOCKED_CRASH_RECOVERY_REQUIRED', detail: `${list}${tmpNote}` } };
  }
  const state = await readState(paths);
  if (state.kind !== 'ok') {
    const reason = state.kind === 'missing' ? 'missing' : state.reason;
    return {
      ok: false,
      block: {
        code: 'BLOCKED_CRASH_RECOVERY_REQUIRED',
        detail: `${paths.relDir}/STATE.json: ${reason}; restore a copy you trust, or run \`${RESET_LEDGER}\` for a fresh ledger (nothing else changes)`,
      },
    };
  }
  return { ok: true, state: state.value, removedTmp };
}

/**
 * Row 7: a hard cap already reached (seed 001 PR1), then the run-wide caps of a loop, then the
 * reservation of one more worst-case tick (seed 000 §12).
 */
function budgetRow(
  { config }: TickSetup,
  state: WorkspaceState,
  runCaps?: { readonly totals: RunTotals; readonly maxTicks: number | null },
): Block | null {
  const milestone = `milestone ${state.milestone_id ?? '(none)'}`;
  const reached = capsReached(state, config);
  if (reached.length > 0)
    return { code: 'BLOCKED_BUDGET_CAP', detail: `${milestone}: ${reached.join('; ')}` };
  const runShort = runCaps ? runCapShortfalls(runCaps.totals, config, runCaps.maxTicks) : [];
  if (runShort.length > 0) return { code: 'BLOCKED_BUDGET_CAP', detail: `this loop: ${runShort.join('; ')}` };
  const shortfalls = reservationShortfalls(state, config);
  return shortfalls.length > 0
    ? {
        code: 'BLOCKED_BUDGET_EXHAUSTED',
        detail: `${milestone}: ${shortfalls.map(describeShortfall).join('; ')}`,
      }
    : null;
}

async function startNeeds(
  setup: TickSetup,
  env: NodeJS.ProcessEnv,
): Promise<{ ok: true } | { ok: false; block: Block }> {
  const { config, paths } = setup;
  const root = setup.facts.root;
  const missingPrompts = TICK_PROMPT_FILE_NAMES.filter((name) => !existsSync(join(paths.promptsDir, name)));
  if (missingPrompts.length > 0) {
    return {
      ok: false,
      block: {
        code: 'BLOCKED_MISSING_CONFIG',
        detail: `missing prompt files in ${config.workspace_dir}/prompts: ${missingPrompts.join(', ')}; run \`relais init\``,
      },
    };
  }
  const refused = sandboxRefusal(setup.sandbox);
  if (refused) return { ok: false, block: refused };
  // The agent CLI of each role a tick runs (agents.orchestrator and agents.builder).
  for (const role of ['orchestrator', 'builder'] as const) {
    const missing = await missingAgentCommand(config, role, env, root);
    if (missing) return { ok: false, block: { code: 'BLOCKED_AGENT_CLI_MISSING', detail: missing } };
  }
  return { ok: true };
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

/** Issue 14: nobody runs unprotected by accident; "off" in the config is the only way past. */
export function sandboxRefusal(sandbox: Sandbox): Block | null {
  return sandbox.kind === 'unavailable'
    ? { code: 'BLOCKED_SANDBOX_UNAVAILABLE', detail: `${sandbox.reason}. ${SANDBOX_FIX}` }
    : null;
}
