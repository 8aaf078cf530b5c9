import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Git } from '../judge/git.js';
import type { RepoFacts } from '../judge/repo.js';
import type { EffectiveScope } from '../judge/scope-rules.js';
import type { RelaisConfig } from '../protocol/config.js';
import type { WorkspaceState } from '../protocol/state.js';
import type { Task } from '../protocol/task.js';
import { budgetSummary, budgetWarnings } from '../workspace/ledger.js';
import type { WorkspacePaths } from '../workspace/paths.js';
import { capText } from '../workspace/render-report-md.js';
import { readUntrustedFile } from '../workspace/safe-read.js';
import { promptSchemaText } from './prompt-schemas.js';

/**
 * Prompt placeholders (seed 000 §4, seed 001 "prompt placeholder tightening"): no generated repo
 * summary, but git status, recent commits, FACTS.md, the last REPORT.md and the budget, each
 * capped so one large file cannot blow the prompt (G4: token discipline).
 */

export const PLACEHOLDER_CAPS = {
  PROJECT_GOAL: 4000,
  FACTS_MD: 4000,
  LAST_REPORT_MD: 6000,
  BLOCKED_JSON_OR_EMPTY: 2000,
  GIT_STATUS: 2000,
  RECENT_COMMITS: 2000,
} as const;

export function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{([A-Z0-9_]+)\}\}/g, (whole, name: string) => values[name] ?? whole);
}

export async function readPrompt(paths: WorkspacePaths, name: string): Promise<string> {
  return readFile(join(paths.promptsDir, name), 'utf8');
}

async function readCapped(path: string, cap: number, fallback: string): Promise<string> {
  // PRD.md and friends are read as untrusted: a FIFO or a huge file must not stall the tick.
  const read = await readUntrustedFile(path, 4 * 1024 * 1024);
  if (!read.ok || read.text.trim().length === 0) return fallback;
  return capText(read.text.trim(), cap);
}

export async function orchestratorValues(input: {
  config: RelaisConfig;
  paths: WorkspacePaths;
  git: Git;
  facts: RepoFacts;
  state: WorkspaceState;
  goal?: string;
}): Promise<Record<string, string>> {
  const { config, paths, git, facts, state } = input;
  // Read side by side (git's log and four files): one after the other they were about 8 ms of a tick.
  const [goalFromFile, log, factsMd, lastReport, blocked] = await Promise.all([
    config.project.goal_file
      ? readCapped(join(paths.root, config.project.goal_file), PLACEHOLDER_CAPS.PROJECT_GOAL, '')
      : '',
    git.run(['log', '--oneline', '--no-decorate', '-n', '10']),
    readCapped(paths.facts, PLACEHOLDER_CAPS.FACTS_MD, '(none)'),
    readCapped(paths.reportMd, PLACEHOLDER_CAPS.LAST_REPORT_MD, '(no previous report)'),
    readCapped(paths.blocked, PLACEHOLDER_CAPS.BLOCKED_JSON_OR_EMPTY, '(none)'),
  ]);
  const goal =
    [config.project.goal.trim(), goalFromFile].filter((g) => g.length > 0).join('\n\n') ||
    '(no goal given: set project.goal in relais.config.json or write PRD.md)';
  const warnings = budgetWarnings(state, config);
  const budget =
    budgetSummary(state, config) +
    (warnings.length > 0
      ? `\nBUDGET CRITICAL: ${warnings.join('; ')}. Prefer the smallest task that finishes the milestone.`
      : '');
  // Preflight just proved the tree clean (a dirty tree blocks), so status need not be walked again.
  const status = `${facts.branchRef?.replace('refs/heads/', 'branch ') ?? 'detached HEAD'} at ${facts.head.slice(0, 12)}: clean`;
  const commits = log.code === 0 ? log.stdout.toString('utf8').trim() : '';
  const gitStatus = capText(status, PLACEHOLDER_CAPS.GIT_STATUS).trim();
  const recent = capText(commits || '(none)', PLACEHOLDER_CAPS.RECENT_COMMITS).trim();
  return {
    PROJECT_GOAL: capText(input.goal ?? goal, PLACEHOLDER_CAPS.PROJECT_GOAL).trim(),
    MILESTONE_ID: state.milestone_id ?? '(none yet: choose a short milestone id)',
    BUDGETS_SUMMARY: budget,
    VERIFY_TEMPLATE_IDS: describeTemplates(config),
    BUILDER_MODES: describeBuilderModes(config, state),
    SCOPE_DEFAULTS: describeScopeDefaults(config),
    GIT_STATUS: gitStatus,
    RECENT_COMMITS: recent,
    REPO_SUMMARY: `${gitStatus}\n${recent}`,
    FACTS_MD: factsMd,
    LAST_REPORT_MD: lastReport,
    BLOCKED_JSON_OR_EMPTY: blocked,
    TASK_SCHEMA: promptSchemaText('task.schema.json'),
  };
}

function describeTemplates(config: RelaisConfig): string {
  if (config.verification.templates.length === 0) return '(none: use empty fast and slow lists)';
  return config.verification.templates
    .map((t) => {
      const params = Object.entries(t.params).map(([name, p]) => `${name}:${p.kind}`);
      return `- ${t.id}${params.length > 0 ? ` (params: ${params.join(', ')}; pass them as verification.params.${t.id})` : ''}`;
    })
    .join('\n');
}

function describeBuilderModes(config: RelaisConfig, state: WorkspaceState): string {
  const preferred = (mode: string) => (config.builder.default_mode === mode ? ' (preferred)' : '');
  const patchLeft = config.builder.patch.max_patch_attempts_per_milestone - state.budgets.patch_attempts;
  const modes = [`- claude_code${preferred('claude_code')}: Claude Code edits the files with its tools`];
  if (config.builder.allow_patch_mode && patchLeft > 0)
    modes.push(
      `- patch${preferred('patch')}: you give the unified diff in builder.patch (${patchLeft} attempts left in this milestone)`,
    );
  if (config.builder.cursor)
    modes.push(`- cursor${preferred('cursor')}: the project's external builder driver does the task`);
  return modes.join('\n');
}

function describeScopeDefaults(config: RelaisConfig): string {
  const s = config.scope;
  const d = config.diff_limits;
  return [
    `allowed_globs (outer fence): ${JSON.stringify(s.default_allowed_globs)}`,
    `forbidden_globs (always enforced): ${JSON.stringify(s.default_forbidden_globs)}`,
    `default allow_new_files: ${s.default_allow_new_files}, default allow_lockfile_changes: ${s.default_allow_lockfile_changes}`,
    `diff limits ceiling: max_files_touched ${d.default_max_files_touched}, max_lines_changed ${d.default_max_lines_changed}`,
  ].join('\n');
}

export function builderValues(task: Task, scope: EffectiveScope): Record<string, string> {
  return {
    TASK_JSON: JSON.stringify(task, null, 2),
    BUILDER_RESULT_SCHEMA: promptSchemaText('builder_result.schema.json'),
    ALLOWED_GLOBS: JSON.stringify(task.scope.allowed_globs),
    FORBIDDEN_GLOBS: JSON.stringify(scope.forbidden),
    ALLOW_NEW_FILES: String(scope.allowNewFiles),
    ALLOW_LOCKFILE_CHANGES: String(scope.allowLockfileChanges),
    MAX_FILES_TOUCHED: String(scope.limits.max_files_touched),
    MAX_LINES_CHANGED: String(scope.limits.max_lines_changed),
  };
}
