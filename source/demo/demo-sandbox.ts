import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { probeBwrap } from '../engine/sandbox/sandbox.js';

/**
 * The demo on a machine without bubblewrap (a fresh Debian, macOS): a user's own runs refuse to
 * start there until the sandbox is installed or turned off in their config, but a newcomer's first
 * command should show the product, not an install step. So the throwaway demo project gets the
 * explicit opt-out a user would write (`"sandbox": "off"`, committed before the workflow starts)
 * and the demo says so plainly. With bubblewrap present nothing changes: `ralphy start` sets the
 * project up itself and every agent and check runs sandboxed.
 */
export async function optOutOfSandboxIfMissing(
  repo: string,
  cli: string,
  env: NodeJS.ProcessEnv,
): Promise<string | null> {
  const probe = await probeBwrap(env, repo);
  if (probe.ok) return null;
  const run = (cmd: string, args: string[]) =>
    spawnSync(cmd, args, { cwd: repo, env: { ...env, CI: 'true' }, stdio: 'ignore' }).status;
  if (run(process.execPath, [cli, 'init']) !== 0) throw new Error('relais init failed in the demo project');
  const configPath = join(repo, 'relais.config.json');
  const config = JSON.parse(readFileSync(configPath, 'utf8')) as Record<string, unknown>;
  config.sandbox = 'off';
  writeFileSync(configPath, `${JSON.stringify(config, null, 2)}\n`);
  run('git', ['add', 'relais.config.json']);
  run('git', ['commit', '-q', '-m', 'Relais config: no bubblewrap on this machine, so the sandbox is off']);
  return [
    `No OS sandbox here: ${probe.reason}.`,
    '   So this demo project says "sandbox": "off" in its relais.config.json, and its agents and checks',
    '   run without bubblewrap (the judge, the scope fence in Claude Code and the rollback still work).',
    '   Your own runs refuse to start like this until you install bubblewrap (Debian/Ubuntu:',
    '   apt-get install bubblewrap) or write that opt-out yourself: see docs/sandbox.md.',
  ].join('\n');
}
