import micromatch from 'micromatch';
import { type Git, splitNul } from '../judge/git.js';
import { worktreeStatus } from '../judge/repo.js';
import type { RelaisConfig } from '../protocol/config.js';
import { resolveSandbox, verificationSandbox } from '../sandbox/sandbox.js';
import { describeEnd, runProcess } from '../supervise/run-process.js';
import { deriveFence } from './derive-fence.js';
import type { DoctorCheck } from './doctor-checks.js';
import { CONFIG_FILE_NAME } from './paths.js';

/**
 * Doctor checks about the project rather than the machine (issue 21 item 4): does the fence
 * match anything, and is the verification already red before the first tick?
 */

export function checkFence(config: RelaisConfig, tracked: readonly string[], root: string): DoctorCheck {
  const globs = config.scope.default_allowed_globs;
  const matching = micromatch(tracked, [...globs], { dot: true });
  const empty = globs.filter((g) => micromatch(tracked, g, { dot: true }).length === 0);
  if (matching.length === 0) {
    // What `relais init` would derive here, to copy: init itself never replaces a valid config.
    const derived = deriveFence(root, tracked).globs;
    return {
      name: 'scope',
      status: 'warn',
      detail: `scope.default_allowed_globs (${globs.join(', ')}) match none of the ${tracked.length} tracked files: every tick that edits an existing file will stop`,
      fix: `List your source, test and doc paths in scope.default_allowed_globs${derived.length > 0 ? ` (derived from this repository: ${derived.join(', ')})` : ''}, then commit relais.config.json.`,
    };
  }
  if (empty.length > 0)
    return {
      name: 'scope',
      status: 'warn',
      detail: `${matching.length} tracked file(s) inside the fence, but ${empty.join(', ')} match(es) nothing (harmless, unless you meant a path that exists)`,
      fix: 'Remove or correct the globs that match nothing in scope.default_allowed_globs.',
    };
  return {
    name: 'scope',
    status: 'ok',
    detail: `${matching.length} of ${tracked.length} tracked files inside the fence (${globs.join(', ')})`,
    fix: null,
  };
}

export async function trackedFiles(git: Git): Promise<string[]> {
  const out = await git.run(['ls-files', '-z']);
  return out.code === 0 ? splitNul(out.stdout) : [];
}

/**
 * Every verification template without parameters, once, on a clean tree: a test command that is
 * already red (unpinned dependencies, a missing install) is learned now, not on the first tick.
 * A template that changes tracked files is named too: every tick would count that as the builder's.
 */
export async function checkVerification(
  git: Git,
  root: string,
  config: RelaisConfig,
  env: NodeJS.ProcessEnv,
): Promise<DoctorCheck[]> {
  const templates = config.verification.templates.filter((t) => Object.keys(t.params ?? {}).length === 0);
  if (templates.length === 0)
    return [
      {
        name: 'verify',
        status: 'warn',
        detail: 'no verification template without parameters: ticks can only be judged by scope',
        fix: 'Add your test command to verification.templates (e.g. {"id": "test", "cmd": "npm", "args": ["test"]}).',
      },
    ];
  // Right after `relais init` the new config is the one untracked file; it does not make the tree dirty.
  const changes = async () => (await worktreeStatus(git)).filter((e) => e !== `?? ${CONFIG_FILE_NAME}`);
  if ((await changes()).length > 0)
    return [
      {
        name: 'verify',
        status: 'warn',
        detail:
          'not run: the working tree has uncommitted changes, and verification is only meaningful on a clean tree',
        fix: 'Commit or stash your changes, then run `relais doctor` again.',
      },
    ];
  const checks: DoctorCheck[] = [];
  // In the same sandbox as a tick's verification (the doctor's own sandbox check reports when
  // there is none; then the checks run as the user would run them by hand).
  const sandbox = await resolveSandbox(config, root, env);
  const policy =
    sandbox.kind === 'bwrap' ? verificationSandbox(sandbox, config.scope.default_allowed_globs) : undefined;
  for (const t of templates) {
    const timeout = t.timeout_seconds ?? config.verification.timeout_fast_seconds;
    const result = await runProcess({
      cmd: t.cmd,
      args: [...t.args],
      cwd: root,
      env,
      timeoutMs: timeout * 1000,
      signal: new AbortController().signal,
      keepTailBytes: 2000,
      ...(policy ? { sandbox: policy } : {}),
    });
    const dirtied = await changes();
    const seconds = (result.durationMs / 1000).toFixed(1);
    const argv = [t.cmd, ...t.args].join(' ');
    if (dirtied.length > 0)
      checks.push({
        name: `verify ${t.id}`,
        status: 'warn',
        detail: `\`${argv}\` changed ${dirtied.length} path(s) in the tree (${dirtied
          .slice(0, 3)
          .map((e) => e.slice(3))
          .join(', ')}): every tick would see that as the builder's change`,
        fix: 'Make the command leave the tree alone (write caches and reports to an ignored folder), then `git checkout -- .`.',
      });
    else if (result.exitCode === 0 && !result.timedOut)
      checks.push({
        name: `verify ${t.id}`,
        status: 'ok',
        detail: `\`${argv}\` passes on a clean tree (${seconds}s)`,
        fix: null,
      });
    else
      checks.push({
        name: `verify ${t.id}`,
        status: 'warn',
        detail: `\`${argv}\` is already red on a clean tree (${describeEnd(result)} after ${seconds}s): every tick would stop STOP_VERIFY_FAILED_*. ${lastLine(result.stderrTail.trim() ? result.stderrTail : result.stdoutTail)}`,
        fix: 'Fix the project first (install dependencies, pin what broke), or remove the template from verification.templates.',
      });
  }
  return checks;
}

function lastLine(tail: string): string {
  const lines = tail.trim().split('\n').filter(Boolean);
  return lines.length > 0 ? `Last output: ${lines.at(-1)?.slice(0, 200)}` : '';
}
