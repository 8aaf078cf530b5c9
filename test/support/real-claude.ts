import { join } from 'node:path';
import { REPO_ROOT } from './project.js';

/** The REAL Claude Code binary relais installs as a dev dependency. */
export const CLAUDE = join(REPO_ROOT, 'node_modules/.bin/claude');

/** Its environment against a scripted model on 127.0.0.1: no key, no network. */
export function claudeEnv(url: string): NodeJS.ProcessEnv {
  return {
    ANTHROPIC_BASE_URL: url,
    ANTHROPIC_API_KEY: 'sk-test-offline',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    // As root, Claude Code refuses bypassPermissions outside a declared sandbox.
    IS_SANDBOX: '1',
  };
}
