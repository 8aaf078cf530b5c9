import type { RelaisConfig } from '../protocol/config.js';
import type { WorkflowFile } from '../protocol/workflow.js';
import type { WorkflowOptions } from './context.js';

/**
 * What a start asks of parallel lanes (issue 19): how many tasks at once (`--parallel N`, else
 * `workflow.parallel`), how many builders try each task (`--attempts K`, for every task) and how
 * many try a task the spec marks risky (`workflow.best_of`). Only the `ticks` engine has lanes:
 * the others are refused here rather than silently run one task at a time.
 */

export interface LanesWanted {
  /** Tasks at once. */
  readonly lanes: number;
  /** `--attempts K` for every task, or null (then risky tasks get `bestOf`). */
  readonly attempts: number | null;
  /** Attempts for a task marked `Risk: high`, when `attempts` is null. */
  readonly bestOf: number;
}

export function lanesWanted(options: WorkflowOptions, config: RelaisConfig): LanesWanted {
  return {
    lanes: options.parallel ?? config.workflow.parallel,
    attempts: options.attempts ?? null,
    bestOf: config.workflow.best_of,
  };
}

/** True when IMPLEMENTATION runs in lanes (runner-owned worktrees) rather than in the main tree. */
export function usesLanes(wanted: LanesWanted): boolean {
  return wanted.lanes > 1 || (wanted.attempts ?? 1) > 1 || wanted.bestOf > 1;
}

/** Attempts for one task: `--attempts` for all, else `workflow.best_of` for the risky ones. */
export function attemptsFor(wanted: LanesWanted, risky: boolean): number {
  if (wanted.attempts !== null) return wanted.attempts;
  return risky ? wanted.bestOf : 1;
}

/**
 * Why this start cannot run lanes, with the fix, or null. `engine` is the engine the workflow
 * will run (the resumed one's, or the new one's).
 */
export function lanesRefusal(
  options: WorkflowOptions,
  config: RelaisConfig,
  engine: WorkflowFile['engine'],
): { detail: string; fix: string } | null {
  const wanted = lanesWanted(options, config);
  if (!usesLanes(wanted)) return null;
  const asked = askedFor(options, wanted);
  if (engine !== 'ticks')
    return {
      detail: `${asked} runs tasks in parallel lanes, which only the ticks engine has; this workflow uses the ${engine} engine (${engineNote(engine)})`,
      fix: `Run a new workflow with --engine ticks, or drop ${asked}${options.parallel === undefined && options.attempts === undefined ? ' from relais.config.json' : ''}.`,
    };
  // A lane lands by its commits: with commit_on_success off its verified change stays uncommitted,
  // the merge queue would land nothing and removing the worktree would delete the work.
  if (!config.runner.commit_on_success)
    return {
      detail: `${asked} needs runner.commit_on_success: a lane's verified work reaches the branch only as commits`,
      fix: `Set runner.commit_on_success to true in relais.config.json, or run with ${wanted.lanes > 1 ? '--parallel 1' : 'one attempt per task'}.`,
    };
  return null;
}

/** The setting that asked for lanes, as the human typed or configured it. */
function askedFor(options: WorkflowOptions, wanted: LanesWanted): string {
  if (options.parallel !== undefined && options.parallel > 1) return `--parallel ${options.parallel}`;
  if (options.attempts !== undefined && options.attempts > 1) return `--attempts ${options.attempts}`;
  if (wanted.lanes > 1) return `workflow.parallel ${wanted.lanes}`;
  return `workflow.best_of ${wanted.bestOf}`;
}

function engineNote(engine: WorkflowFile['engine']): string {
  return engine === 'single'
    ? 'one dev-agent run implements every task in the main tree'
    : 'the deadf cycle runs its own loop in the main tree';
}
