import micromatch from 'micromatch';
import type { Code } from '../protocol/codes.js';
import type { DiffLimits, TaskKind, TaskScope } from '../protocol/task.js';
import type { TouchedFile } from './touched-set.js';

/**
 * Seed 000 Appendix A4 as one pure function: rows in priority order, first match gives the code.
 * Every violation of every row is still listed, so the report shows the whole picture.
 */

export interface EffectiveScope {
  /** A path must match the task's allowed globs AND the config's (the config is the outer fence). */
  readonly taskAllowed: readonly string[];
  readonly configAllowed: readonly string[];
  /** Union of task, config and runner-enforced forbidden globs. */
  readonly forbidden: readonly string[];
  readonly allowNewFiles: boolean;
  readonly allowLockfileChanges: boolean;
  readonly lockfiles: readonly string[];
  readonly limits: DiffLimits;
}

export interface JudgeInput {
  readonly files: readonly TouchedFile[];
  readonly taskKind: TaskKind;
  readonly scope: EffectiveScope;
  /** Runner-owned paths in the worktree that git can see (relais.config.json). */
  readonly runnerOwnedGlobs: readonly string[];
  /** Touched symlinks whose target leaves the repository or enters a protected folder. */
  readonly escapingSymlinks: readonly string[];
  /** Edits hidden from git diff: new index flags (assume-unchanged, skip-worktree), replace refs. */
  readonly hiddenChanges: readonly string[];
  /** Set when HEAD or the branch moved in a way the builder diff does not explain (row 9). */
  readonly headMoved: string | null;
  /** Hard links, FIFOs, sockets and device nodes the tick made (issue 14): refused like a forbidden path. */
  readonly unsafeFiles?: readonly string[];
}

export interface JudgeVerdict {
  readonly code: Code | null;
  readonly violations: string[];
  readonly linesChanged: number;
}

const MATCH = { dot: true } as const;

export function judgeScope(input: JudgeInput): JudgeVerdict {
  const { files, scope } = input;
  const linesChanged = files.reduce((sum, f) => sum + f.added + f.deleted, 0);
  const rows: Array<{ code: Code; violations: string[] }> = [
    { code: 'STOP_RUNNER_OWNED_MUTATION', violations: runnerOwned(input) },
    { code: 'STOP_SCOPE_VIOLATION_FORBIDDEN', violations: forbidden(input) },
    { code: 'STOP_SCOPE_VIOLATION_OUTSIDE_ALLOWED', violations: outsideAllowed(input) },
    {
      code: 'STOP_SCOPE_VIOLATION_NEW_FILE',
      violations: scope.allowNewFiles
        ? []
        : files
            .filter((f) => f.status === 'added' && f.source !== 'protected')
            .map((f) => `new file: ${f.path}`),
    },
    {
      code: 'STOP_LOCKFILE_CHANGE_FORBIDDEN',
      violations: scope.allowLockfileChanges
        ? []
        : files.filter((f) => isLockfile(f.path, scope.lockfiles)).map((f) => `lockfile changed: ${f.path}`),
    },
    { code: 'STOP_DIFF_TOO_LARGE', violations: diffTooLarge(files.length, linesChanged, scope.limits) },
    {
      code: 'STOP_QUESTION_SIDE_EFFECTS',
      violations:
        input.taskKind === 'question' && files.length > 0
          ? [`question task changed ${files.length} file(s)`]
          : [],
    },
    {
      code: 'STOP_VERIFY_ONLY_SIDE_EFFECTS',
      violations:
        input.taskKind === 'verify_only' && files.length > 0
          ? [`verify_only task changed ${files.length} file(s)`]
          : [],
    },
    { code: 'STOP_HEAD_MOVED', violations: input.headMoved ? [input.headMoved] : [] },
  ];
  const first = rows.find((r) => r.violations.length > 0);
  return { code: first?.code ?? null, violations: rows.flatMap((r) => r.violations), linesChanged };
}

function runnerOwned(input: JudgeInput): string[] {
  return input.files
    .filter(
      (f) =>
        f.protectedKind === 'runner_owned' ||
        (f.source !== 'protected' && micromatch.isMatch(f.path, [...input.runnerOwnedGlobs], MATCH)),
    )
    .map((f) => `runner-owned path ${f.status}: ${f.path}`);
}

function forbidden(input: JudgeInput): string[] {
  const out: string[] = [];
  for (const f of input.files) {
    if (f.protectedKind === 'runner_owned') continue;
    if (f.protectedKind === 'git_internal') out.push(`git control file ${f.status}: ${f.path}`);
    else if (f.protectedKind === 'git_config_outside')
      out.push(`git config outside the repository ${f.status}: ${f.path}`);
    else if (micromatch.isMatch(f.path, [...input.scope.forbidden], MATCH))
      out.push(`forbidden path: ${f.path}`);
  }
  for (const link of input.escapingSymlinks) out.push(`symlink leaves the repository: ${link}`);
  for (const f of input.files)
    if (f.gitlink) out.push(`nested repository recorded as a submodule: ${f.path}`);
  out.push(...input.hiddenChanges);
  out.push(...(input.unsafeFiles ?? []));
  return out;
}

function outsideAllowed(input: JudgeInput): string[] {
  const { taskAllowed, configAllowed } = input.scope;
  return (
    input.files
      .filter((f) => f.source !== 'protected')
      .map((f) => ({
        path: f.path,
        task: micromatch.isMatch(f.path, [...taskAllowed], MATCH),
        config: micromatch.isMatch(f.path, [...configAllowed], MATCH),
      }))
      .filter((f) => !f.task || !f.config)
      // Which fence excluded it: the fix differs (issue 21 item 4: widen the config, not the task).
      .map((f) =>
        f.config
          ? `outside the task's allowed_globs: ${f.path}`
          : `outside the config's scope.default_allowed_globs${f.task ? ' (the task allowed it)' : ''}: ${f.path}`,
      )
  );
}

function isLockfile(path: string, lockfiles: readonly string[]): boolean {
  const name = path.slice(path.lastIndexOf('/') + 1);
  return lockfiles.includes(name) || lockfiles.includes(path);
}

function diffTooLarge(filesTouched: number, linesChanged: number, limits: DiffLimits): string[] {
  const out: string[] = [];
  if (filesTouched > limits.max_files_touched)
    out.push(`${filesTouched} files touched > max_files_touched ${limits.max_files_touched}`);
  if (linesChanged > limits.max_lines_changed)
    out.push(`${linesChanged} lines changed > max_lines_changed ${limits.max_lines_changed}`);
  return out;
}

/**
 * Combines task and config scope (docs/ARCHITECTURE.md "Decisions": the config is the fence, a
 * task can only narrow it).
 */
export function effectiveScope(
  task: { scope: TaskScope; diff_limits: DiffLimits },
  config: {
    allowed: readonly string[];
    forbidden: readonly string[];
    lockfiles: readonly string[];
    maxFiles: number;
    maxLines: number;
  },
  runnerForbidden: readonly string[],
): EffectiveScope {
  return {
    taskAllowed: task.scope.allowed_globs,
    configAllowed: config.allowed,
    forbidden: [...new Set([...task.scope.forbidden_globs, ...config.forbidden, ...runnerForbidden])],
    allowNewFiles: task.scope.allow_new_files,
    allowLockfileChanges: task.scope.allow_lockfile_changes,
    lockfiles: config.lockfiles,
    limits: {
      max_files_touched: Math.min(task.diff_limits.max_files_touched, config.maxFiles),
      max_lines_changed: Math.min(task.diff_limits.max_lines_changed, config.maxLines),
    },
  };
}
