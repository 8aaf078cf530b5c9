/**
 * Secrets in the runner's environment that a sandboxed process does not need, by role. The
 * sandbox hides the user's credential files (credential-stores.ts); these are the same keys handed
 * over as variables. What a process can read it can pass on: an agent has the network (its
 * model's API), and a verification's output goes to the report and into the next agent's prompt.
 */

/** Tokens that publish packages or images as the user: no agent and no check needs one. */
const PUBLISH_TOKENS = [
  'NPM_TOKEN',
  'NODE_AUTH_TOKEN',
  'YARN_NPM_AUTH_TOKEN',
  'CARGO_REGISTRY_TOKEN',
  'TWINE_PASSWORD',
  'PYPI_TOKEN',
  'PYPI_API_TOKEN',
  'UV_PUBLISH_TOKEN',
  'POETRY_PYPI_TOKEN_PYPI',
  'GEM_HOST_API_KEY',
  'NUGET_API_KEY',
  'DOCKER_PASSWORD',
  'DOCKERHUB_TOKEN',
  'VSCE_PAT',
  'OVSX_PAT',
  'HOMEBREW_GITHUB_API_TOKEN',
  'GITLAB_TOKEN',
  'CI_JOB_TOKEN',
];

/**
 * The agents' own model keys and the cloud keys an agent CLI may sign in with (Claude Code on
 * Bedrock or Vertex): kept for the agents, which need them, and dropped for verification, which
 * runs the project's code and calls no model through the runner.
 */
const AGENT_KEYS = [
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'CLAUDE_CODE_OAUTH_TOKEN',
  'OPENAI_API_KEY',
  'CODEX_API_KEY',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_BEARER_TOKEN_BEDROCK',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'AZURE_CLIENT_SECRET',
];

export type SandboxRole = 'agents' | 'verification';

/** The variables a sandboxed process of `role` starts without. */
export function secretEnvFor(role: SandboxRole): readonly string[] {
  return role === 'agents' ? PUBLISH_TOKENS : [...PUBLISH_TOKENS, ...AGENT_KEYS];
}
