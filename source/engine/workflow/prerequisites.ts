import {
  CLAUDE_LOGIN_FIX,
  claudeLoginFound,
  NO_CLAUDE_LOGIN,
  ROOT_WITHOUT_SANDBOX,
  refusesBypassAsRoot,
} from '../agents/claude-code/readiness.js';
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
  // A warning here, not a refusal: the signs read offline may miss a login Claude Code has (the
  // doctor fails it; an agent call that meets it is not retried and says this fix).
  if (!claudeLoginFound(agentEnv))
    checks.push(problem('claude login', 'warn', NO_CLAUDE_LOGIN, CLAUDE_LOGIN_FIX));
  if (config.workflow.permission_mode === 'bypassPermissions' && refusesBypassAsRoot(agentEnv))
    checks.push(
      problem(
        'permissions',
        'fail',
        ROOT_WITHOUT_SANDBOX,
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

function pass(name: string, detail: string): DoctorCheck {
  return { name, status: 'ok', detail, fix: null };
}

function problem(name: string, status: 'warn' | 'fail', detail: string, fix: string): DoctorCheck {
  return { name, status, detail, fix };
}
