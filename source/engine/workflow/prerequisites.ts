import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { findExecutable, findRunnerTool } from '../agents/find-executable.js';
import type { Git } from '../judge/git.js';
import type { RelaisConfig } from '../protocol/config.js';
import type { DoctorCheck } from '../workspace/doctor-checks.js';

/**
 * Seed 002 §11, checked before a workflow starts, each with its fix: Claude Code installed (and,
 * as far as can be told offline, logged in), git configured, the project a git repository with a
 * commit (checked by the caller), and the GitHub CLI for the pull request. A failure stops the
 * start; a warning is shown and the workflow goes on.
 */
export async function workflowPrerequisites(input: {
  readonly config: RelaisConfig;
  readonly git: Git;
  readonly root: string;
  readonly env: NodeJS.ProcessEnv;
}): Promise<{ checks: DoctorCheck[]; claude: string | null }> {
  const { config, git, root, env } = input;
  const checks: DoctorCheck[] = [];
  const claude = await findExecutable(config.claude_code_cli.command, env, root);
  checks.push(
    claude
      ? pass('claude', claude)
      : problem(
          'claude',
          'fail',
          `"${config.claude_code_cli.command}" was not found`,
          'Install Claude Code: npm install -g @anthropic-ai/claude-code (or set claude_code_cli.command)',
        ),
  );
  const agentEnv = { ...env, ...config.claude_code_cli.extra_env };
  if (!loggedIn(agentEnv))
    checks.push(
      problem(
        'claude login',
        'warn',
        'no ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN or ~/.claude/.credentials.json found',
        'Run `claude` once and log in (/login), or set ANTHROPIC_API_KEY',
      ),
    );
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot && config.workflow.permission_mode === 'bypassPermissions' && agentEnv.IS_SANDBOX !== '1')
    checks.push(
      problem(
        'permissions',
        'fail',
        'running as root: Claude Code refuses bypassPermissions as root unless IS_SANDBOX=1',
        'Run ralphy as a normal user, or set IS_SANDBOX=1 inside a real sandbox (or workflow.permission_mode "acceptEdits")',
      ),
    );
  const name = (await git.run(['config', 'user.name'])).stdout.toString().trim() || env.GIT_AUTHOR_NAME;
  const email = (await git.run(['config', 'user.email'])).stdout.toString().trim() || env.GIT_AUTHOR_EMAIL;
  checks.push(
    name && email
      ? pass('git identity', `${name} <${email}>`)
      : problem(
          'git identity',
          'warn',
          'git user.name or user.email is not set; commits will be signed "Relais <relais@localhost>"',
          'git config --global user.name "Your Name" && git config --global user.email you@example.com',
        ),
  );
  const gh = await findRunnerTool(config.pr.gh_command, env, root);
  checks.push(
    gh
      ? pass('gh', gh)
      : problem(
          'gh',
          'warn',
          `the GitHub CLI (${config.pr.gh_command}) is not installed: the branch will be pushed but no pull request opened`,
          'Install gh (https://cli.github.com), then gh auth login',
        ),
  );
  return { checks, claude };
}

function loggedIn(env: NodeJS.ProcessEnv): boolean {
  if (env.ANTHROPIC_API_KEY || env.CLAUDE_CODE_OAUTH_TOKEN || env.ANTHROPIC_AUTH_TOKEN) return true;
  const home = env.HOME ?? homedir();
  const configDir = env.CLAUDE_CONFIG_DIR ?? join(home, '.claude');
  return existsSync(join(configDir, '.credentials.json')) || process.platform === 'darwin';
}

function pass(name: string, detail: string): DoctorCheck {
  return { name, status: 'ok', detail, fix: null };
}

function problem(name: string, status: 'warn' | 'fail', detail: string, fix: string): DoctorCheck {
  return { name, status, detail, fix };
}
