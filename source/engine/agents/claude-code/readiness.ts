import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * What can be told about Claude Code before starting it, offline and without spending: is there a
 * login, and will it accept bypassPermissions. `relais doctor` and `ralphy start` ask the same
 * questions here, so the doctor cannot say "ok" about what makes a start refuse.
 */

/** The fix for a missing login, said by the doctor, `ralphy start` and a refused agent call. */
export const CLAUDE_LOGIN_FIX = 'Run `claude` once and log in (/login), or set ANTHROPIC_API_KEY.';

/**
 * Any sign of a login Claude Code would use: a key or token in the environment, a cloud provider
 * (Bedrock, Vertex), the credentials file, an API key or key helper in its settings, or macOS
 * (where the login lives in the keychain, which is not read here).
 */
export function claudeLoginFound(env: NodeJS.ProcessEnv): boolean {
  if (env.ANTHROPIC_API_KEY || env.CLAUDE_CODE_OAUTH_TOKEN || env.ANTHROPIC_AUTH_TOKEN) return true;
  if (env.CLAUDE_CODE_USE_BEDROCK || env.CLAUDE_CODE_USE_VERTEX) return true;
  if (process.platform === 'darwin') return true;
  const home = env.HOME ?? homedir();
  const configDir = env.CLAUDE_CONFIG_DIR ?? join(home, '.claude');
  if (existsSync(join(configDir, '.credentials.json'))) return true;
  return (
    jsonHasKey(join(configDir, 'settings.json'), 'apiKeyHelper') ||
    jsonHasKey(join(env.CLAUDE_CONFIG_DIR ?? home, '.claude.json'), 'primaryApiKey')
  );
}

/** No login sign: what is missing, said the same way everywhere. */
export const NO_CLAUDE_LOGIN =
  'no sign of a Claude Code login (no ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN or ~/.claude/.credentials.json): every agent call would fail';

/** Claude Code refuses bypassPermissions (every builder) as root unless IS_SANDBOX=1. */
export function refusesBypassAsRoot(agentEnv: NodeJS.ProcessEnv): boolean {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  return isRoot && agentEnv.IS_SANDBOX !== '1';
}

export const ROOT_WITHOUT_SANDBOX =
  'running as root: Claude Code refuses bypassPermissions (every builder) as root unless IS_SANDBOX=1';

/** A failure no retry can change: the login is missing, expired or refused (an API 401). */
export function isLoginFailure(said: {
  readonly failure: string | null;
  readonly errorText: string | null;
  readonly apiErrorStatus: number | null;
}): boolean {
  if (said.apiErrorStatus === 401) return true;
  return [said.failure, said.errorText].some(
    (text) =>
      text !== null &&
      /not logged in|please run \/login|invalid api key|authentication_error|oauth token has expired|invalid x-api-key/i.test(
        text,
      ),
  );
}

function jsonHasKey(path: string, key: string): boolean {
  try {
    const value = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    return typeof value === 'object' && value !== null && Boolean((value as Record<string, unknown>)[key]);
  } catch {
    return false;
  }
}
