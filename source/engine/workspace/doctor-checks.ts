import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { findExecutable } from '../agents/find-executable.js';
import { Git } from '../judge/git.js';
import { gitCommonDir, readRepoFacts } from '../judge/repo.js';
import { renderJsonSchemaFile, SCHEMA_FILE_NAMES } from '../protocol/json-schemas.js';
import { runProcess } from '../supervise/run-process.js';
import { budgetSummary, budgetWarnings, reservationShortfalls } from './ledger.js';
import { loadConfig } from './load-config.js';
import { inspectLock } from './lock.js';
import { PROMPT_FILE_NAMES, workspacePaths } from './paths.js';
import { readState } from './state-store.js';

/** `relais doctor`: every prerequisite of a tick, each with the fix when it is not right. */

export interface DoctorCheck {
  readonly name: string;
  readonly status: 'ok' | 'warn' | 'fail';
  readonly detail: string;
  readonly fix: string | null;
}

export async function runDoctor(root: string, env: NodeJS.ProcessEnv): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  const add = (name: string, status: DoctorCheck['status'], detail: string, fix: string | null = null) =>
    checks.push({ name, status, detail, fix });

  const major = Number(process.versions.node.split('.')[0]);
  add(
    'node',
    major >= 20 ? 'ok' : 'fail',
    `Node.js ${process.version}`,
    major >= 20 ? null : 'Install Node.js 20 or newer.',
  );

  const git = new Git(root, env);
  const gitVersion = await git.run(['--version']);
  add(
    'git',
    gitVersion.code === 0 ? 'ok' : 'fail',
    gitVersion.stdout.toString().trim() || gitVersion.stderr.trim(),
    gitVersion.code === 0 ? null : 'Install git and put it on PATH.',
  );
  const repo = await readRepoFacts(git, root);
  add(
    'repository',
    repo.ok ? 'ok' : 'fail',
    repo.ok
      ? `${repo.facts.root} at ${repo.facts.head.slice(0, 12)} (${repo.facts.branchRef ?? 'detached HEAD'})`
      : repo.detail,
    repo.ok ? null : 'Run relais at the root of a git repository with at least one commit.',
  );

  const loaded = await loadConfig(root);
  if (!loaded.ok) {
    add(
      'config',
      'fail',
      loaded.detail,
      loaded.problem === 'missing'
        ? 'Run `relais init`.'
        : 'Fix the named field in relais.config.json (or `relais init --force` to start over; the old file is kept).',
    );
    return checks;
  }
  const config = loaded.config;
  add('config', 'ok', 'relais.config.json is valid');
  const paths = workspacePaths(root, config.workspace_dir);

  const agent = await findExecutable(config.claude_code_cli.command, env, root);
  if (!agent) {
    add(
      'claude',
      'fail',
      `"${config.claude_code_cli.command}" not found`,
      'Install Claude Code (npm install -g @anthropic-ai/claude-code) or set claude_code_cli.command.',
    );
  } else {
    const version = await runProcess({
      cmd: agent,
      args: ['--version'],
      cwd: root,
      env: { ...env, ...config.claude_code_cli.extra_env },
      timeoutMs: 15_000,
    });
    const text = version.stdoutTail.trim().split('\n')[0] ?? '';
    add(
      'claude',
      version.exitCode === 0 ? 'ok' : 'fail',
      version.exitCode === 0
        ? `${agent}: ${text}`
        : `${agent} --version failed: ${version.stderrTail.trim().slice(0, 200)}`,
      version.exitCode === 0 ? null : 'Reinstall Claude Code.',
    );
  }
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot && env.IS_SANDBOX !== '1' && config.claude_code_cli.extra_env.IS_SANDBOX !== '1') {
    add(
      'permissions',
      'warn',
      'running as root: Claude Code refuses bypassPermissions (the builder) as root unless IS_SANDBOX=1',
      'Run relais as a normal user, or inside a sandbox with IS_SANDBOX=1.',
    );
  }

  add(
    'workspace',
    existsSync(paths.dir) ? 'ok' : 'fail',
    `${config.workspace_dir}/`,
    existsSync(paths.dir) ? null : 'Run `relais init`.',
  );
  const missingPrompts = PROMPT_FILE_NAMES.filter((n) => !existsSync(join(paths.promptsDir, n)));
  add(
    'prompts',
    missingPrompts.length === 0 ? 'ok' : 'fail',
    missingPrompts.length === 0 ? 'all four prompt files present' : `missing: ${missingPrompts.join(', ')}`,
    missingPrompts.length === 0 ? null : 'Run `relais init` (your edited prompts are kept).',
  );
  const stale: string[] = [];
  for (const name of SCHEMA_FILE_NAMES) {
    const current = await readFile(join(paths.schemasDir, name), 'utf8').catch(() => null);
    if (current !== renderJsonSchemaFile(name)) stale.push(name);
  }
  add(
    'schemas',
    stale.length === 0 ? 'ok' : 'warn',
    stale.length === 0 ? 'up to date' : `missing or outdated: ${stale.join(', ')}`,
    stale.length === 0 ? null : 'Run `relais init` to refresh them.',
  );

  const commonDir = await gitCommonDir(git);
  const exclude = commonDir ? await readFile(join(commonDir, 'info', 'exclude'), 'utf8').catch(() => '') : '';
  const excluded = exclude.split('\n').some((l) => l.trim() === `/${config.workspace_dir}/`);
  add(
    'git exclude',
    excluded ? 'ok' : 'fail',
    excluded ? `/${config.workspace_dir}/ is in .git/info/exclude` : 'the workspace is not excluded from git',
    excluded ? null : 'Run `relais init`.',
  );

  const state = await readState(paths);
  if (state.kind !== 'ok') {
    add(
      'ledger',
      'fail',
      `STATE.json ${state.kind === 'missing' ? 'missing' : `corrupt: ${state.reason}`}`,
      'Restore it from relais/history, or run `relais init --force` (the old file is kept aside).',
    );
  } else {
    const short = reservationShortfalls(state.value, config);
    const warnings = budgetWarnings(state.value, config);
    add(
      'ledger',
      short.length > 0 ? 'fail' : warnings.length > 0 ? 'warn' : 'ok',
      `milestone ${state.value.milestone_id ?? '(none)'}: ${budgetSummary(state.value, config)}`,
      short.length > 0 ? 'Budget exhausted: raise budgets.per_milestone or start a new milestone.' : null,
    );
  }
  const lock = await inspectLock(paths.lock);
  add(
    'lock',
    lock.held ? 'warn' : 'ok',
    lock.held ? lock.detail : 'free',
    lock.held ? 'Wait for the running tick, or delete relais/lock.json if no relais process runs.' : null,
  );
  return checks;
}
