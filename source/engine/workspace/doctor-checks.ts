import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CLAUDE_LOGIN_FIX,
  claudeLoginFound,
  NO_CLAUDE_LOGIN,
  ROOT_WITHOUT_SANDBOX,
  refusesBypassAsRoot,
} from '../agents/claude-code/readiness.js';
import { findExecutable } from '../agents/find-executable.js';
import { Git } from '../judge/git.js';
import { gitCommonDir, readRepoFacts } from '../judge/repo.js';
import type { RelaisConfig } from '../protocol/config.js';
import { PROJECT_SCHEMA_FILE_NAMES, renderJsonSchemaFile } from '../protocol/json-schemas.js';
import { workflowFileSchema } from '../protocol/workflow.js';
import { resolveSandbox, SANDBOX_FIX } from '../sandbox/sandbox.js';
import { runProcess } from '../supervise/run-process.js';
import { readJsonValidated } from './atomic-write.js';
import { checkOutwardLinks } from './doctor-outward-links.js';
import { checkFence, checkVerification, trackedFiles } from './doctor-project-checks.js';
import { budgetSummary, budgetWarnings, reservationShortfalls } from './ledger.js';
import { loadConfig } from './load-config.js';
import { inspectLock } from './lock.js';
import { PROMPT_FILE_NAMES, type WorkspacePaths, workspacePaths } from './paths.js';
import { RESET_LEDGER, readState } from './state-store.js';

/** `relais doctor`: every prerequisite of a tick, each with the fix when it is not right. */

export interface DoctorCheck {
  readonly name: string;
  readonly status: 'ok' | 'warn' | 'fail';
  readonly detail: string;
  readonly fix: string | null;
}

const ok = (name: string, detail: string): DoctorCheck => ({ name, status: 'ok', detail, fix: null });
const bad = (name: string, status: 'warn' | 'fail', detail: string, fix: string): DoctorCheck => ({
  name,
  status,
  detail,
  fix,
});

export async function runDoctor(root: string, env: NodeJS.ProcessEnv): Promise<DoctorCheck[]> {
  const git = new Git(root, env);
  const checks = [checkNode(), ...(await checkGit(git, root))];
  const loaded = await loadConfig(root);
  if (!loaded.ok) {
    const fix =
      loaded.problem === 'missing'
        ? 'Run `relais init`.'
        : 'Fix the named field in relais.config.json (or `relais init --force` to start over; the old file is kept).';
    return [...checks, bad('config', 'fail', loaded.detail, fix)];
  }
  const config = loaded.config;
  const paths = workspacePaths(root, config.workspace_dir);
  return [
    ...checks,
    ok('config', 'relais.config.json is valid'),
    ...(await checkClaude(config, root, env)),
    await checkSandbox(config, root, env),
    ...(await checkWorkspace(paths)),
    await checkExclude(git, config.workspace_dir),
    await checkLedger(paths, config),
    ...(await checkWorkflowFile(paths)),
    await checkLock(paths),
    checkFence(config, await trackedFiles(git), root),
    ...(await checkOutwardLinks(git, root, config)),
    // Never beside a running tick: its verification would race the builder's edits.
    ...((await inspectLock(paths.lock)).held ? [] : await checkVerification(git, root, config, env)),
  ];
}

function checkNode(): DoctorCheck {
  const major = Number(process.versions.node.split('.')[0]);
  return major >= 20
    ? ok('node', `Node.js ${process.version}`)
    : bad('node', 'fail', `Node.js ${process.version}`, 'Install Node.js 20 or newer.');
}

async function checkGit(git: Git, root: string): Promise<DoctorCheck[]> {
  const version = await git.run(['--version']);
  const gitCheck =
    version.code === 0
      ? ok('git', version.stdout.toString().trim())
      : bad('git', 'fail', version.stderr.trim(), 'Install git and put it on PATH.');
  const repo = await readRepoFacts(git, root);
  const repoCheck = repo.ok
    ? ok(
        'repository',
        `${repo.facts.root} at ${repo.facts.head.slice(0, 12)} (${repo.facts.branchRef ?? 'detached HEAD'})`,
      )
    : bad(
        'repository',
        'fail',
        repo.detail,
        'Run relais at the root of a git repository with at least one commit.',
      );
  return [gitCheck, repoCheck];
}

async function checkClaude(
  config: RelaisConfig,
  root: string,
  env: NodeJS.ProcessEnv,
): Promise<DoctorCheck[]> {
  const agent = await findExecutable(config.claude_code_cli.command, env, root);
  if (!agent) {
    return [
      bad(
        'claude',
        'fail',
        `"${config.claude_code_cli.command}" not found`,
        'Install Claude Code (npm install -g @anthropic-ai/claude-code) or set claude_code_cli.command.',
      ),
    ];
  }
  const version = await runProcess({
    cmd: agent,
    args: ['--version'],
    cwd: root,
    env: { ...env, ...config.claude_code_cli.extra_env },
    timeoutMs: 15_000,
  });
  const checks = [
    version.exitCode === 0
      ? ok('claude', `${agent}: ${version.stdoutTail.trim().split('\n')[0] ?? ''}`)
      : bad(
          'claude',
          'fail',
          `${agent} --version failed: ${version.stderrTail.trim().slice(0, 200)}`,
          'Reinstall Claude Code.',
        ),
  ];
  // Both make every start refuse or every agent call fail: failures, not warnings.
  const agentEnv = { ...env, ...config.claude_code_cli.extra_env };
  checks.push(
    claudeLoginFound(agentEnv)
      ? ok('claude login', 'a login or API key is there for Claude Code')
      : bad('claude login', 'fail', NO_CLAUDE_LOGIN, CLAUDE_LOGIN_FIX),
  );
  if (refusesBypassAsRoot(agentEnv))
    checks.push(
      bad(
        'permissions',
        'fail',
        ROOT_WITHOUT_SANDBOX,
        'Run relais as a normal user, or set IS_SANDBOX=1 inside a real sandbox (a container, a VM).',
      ),
    );
  return checks;
}

async function checkWorkspace(paths: WorkspacePaths): Promise<DoctorCheck[]> {
  if (!existsSync(paths.dir))
    return [bad('workspace', 'fail', `${paths.relDir}/ is missing`, 'Run `relais init`.')];
  const missing = PROMPT_FILE_NAMES.filter((n) => !existsSync(join(paths.promptsDir, n)));
  const stale: string[] = [];
  for (const name of PROJECT_SCHEMA_FILE_NAMES) {
    const current = await readFile(join(paths.schemasDir, name), 'utf8').catch(() => null);
    if (current !== renderJsonSchemaFile(name)) stale.push(name);
  }
  return [
    ok('workspace', `${paths.relDir}/`),
    missing.length === 0
      ? ok('prompts', `all ${PROMPT_FILE_NAMES.length} prompt files present`)
      : bad(
          'prompts',
          'fail',
          `missing: ${missing.join(', ')}`,
          'Run `relais init` (your edited prompts are kept).',
        ),
    stale.length === 0
      ? ok('schemas', 'up to date')
      : bad(
          'schemas',
          'warn',
          `missing or outdated: ${stale.join(', ')}`,
          'Run `relais init` to refresh them.',
        ),
  ];
}

async function checkExclude(git: Git, workspaceDir: string): Promise<DoctorCheck> {
  const commonDir = await gitCommonDir(git);
  const exclude = commonDir ? await readFile(join(commonDir, 'info', 'exclude'), 'utf8').catch(() => '') : '';
  return exclude.split('\n').some((l) => l.trim() === `/${workspaceDir}/`)
    ? ok('git exclude', `/${workspaceDir}/ is in .git/info/exclude`)
    : bad('git exclude', 'fail', 'the workspace is not excluded from git', 'Run `relais init`.');
}

async function checkLedger(paths: WorkspacePaths, config: RelaisConfig): Promise<DoctorCheck> {
  const state = await readState(paths);
  if (state.kind !== 'ok') {
    const why = state.kind === 'missing' ? 'missing' : `corrupt: ${state.reason}`;
    return bad(
      'ledger',
      'fail',
      `STATE.json ${why}`,
      `Restore a copy you trust, or run \`${RESET_LEDGER}\` for a fresh ledger (the old file is kept aside; nothing else changes).`,
    );
  }
  const detail = `milestone ${state.value.milestone_id ?? '(none)'}: ${budgetSummary(state.value, config)}`;
  if (reservationShortfalls(state.value, config).length > 0) {
    return bad(
      'ledger',
      'fail',
      detail,
      'Budget exhausted: raise budgets.per_milestone or start a new milestone.',
    );
  }
  const warnings = budgetWarnings(state.value, config);
  return warnings.length > 0
    ? bad('ledger', 'warn', detail, `Near the cap: ${warnings.join('; ')}.`)
    : ok('ledger', detail);
}

/** A WORKFLOW.json that does not validate makes `ralphy start` refuse: said here first. */
async function checkWorkflowFile(paths: WorkspacePaths): Promise<DoctorCheck[]> {
  const read = await readJsonValidated(paths.workflow, workflowFileSchema);
  const rel = `${paths.relDir}/WORKFLOW.json`;
  if (read.kind === 'missing') return [];
  if (read.kind === 'ok')
    return [ok('workflow', `${rel}: "${read.value.prd_title}" ${read.value.state} (${read.value.status})`)];
  return [
    bad(
      'workflow',
      'fail',
      `${rel} is unreadable (${read.reason}): ralphy start refuses to begin`,
      `Move it aside to start a new workflow: mv ${rel} ${rel}.bak`,
    ),
  ];
}

async function checkLock(paths: WorkspacePaths): Promise<DoctorCheck> {
  const lock = await inspectLock(paths.lock);
  return lock.held
    ? bad(
        'lock',
        'warn',
        lock.detail,
        'Wait for the running tick, or delete relais/lock.json if no relais process runs.',
      )
    : ok('lock', 'free');
}

/** Issue 14: which sandbox agents and verifications will run in, and the fix when there is none. */
async function checkSandbox(
  config: RelaisConfig,
  root: string,
  env: NodeJS.ProcessEnv,
): Promise<DoctorCheck> {
  const sandbox = await resolveSandbox(config, root, env);
  if (sandbox.kind === 'bwrap')
    return ok('sandbox', `bubblewrap (${sandbox.bwrap}): own PID namespace, writes only in the task's paths`);
  if (sandbox.kind === 'off')
    return bad(
      'sandbox',
      'warn',
      'sandbox is "off" in relais.config.json: agents and verifications run unprotected',
      'Install bubblewrap and remove "sandbox": "off" from relais.config.json.',
    );
  return bad('sandbox', 'fail', `no sandbox: ${sandbox.reason}; runs refuse to start`, SANDBOX_FIX);
}
