import type { Git } from '../../judge/git.js';
import { splitNul } from '../../judge/git.js';
import type { SandboxPolicy } from '../../sandbox/policy.js';
import { runProcess } from '../../supervise/run-process.js';

/**
 * Applying a validated patch with git. Flags checked against git 2.39: seed 001's
 * `--unsafe-paths=false` is rejected ("takes no value"; refusing unsafe paths is already the
 * default) and `--directory=<repoRoot>` would prepend an absolute path to every name, so neither
 * is passed. `--check` runs first so a failing patch changes nothing.
 */

/** The paths git itself reads from the patch (renames and copies give both names). */
export async function pathsGitSees(
  git: Git,
  patch: string,
): Promise<{ ok: true; paths: string[] } | { ok: false; error: string }> {
  const result = await git.run(['apply', '--numstat', '-z', '-'], { stdin: patch });
  if (result.code !== 0)
    return { ok: false, error: result.stderr.trim().split('\n')[0] ?? 'git apply --numstat failed' };
  const fields = splitNul(result.stdout);
  const paths: string[] = [];
  for (const field of fields) {
    // "-\t-" is how git counts binary content: refused whatever header announced it.
    if (field.startsWith('-\t-\t'))
      return { ok: false, error: 'binary patches are refused (git reads binary content in it)' };
    const parts = field.split('\t');
    // "added\tdeleted\tpath", or "added\tdeleted\t" followed by the two names of a rename.
    const name = parts.length >= 3 ? parts.slice(2).join('\t') : field;
    if (name) paths.push(name);
  }
  return { ok: true, paths };
}

/**
 * Applies the patch, inside the OS sandbox when there is one (issue 14): writable only in the
 * task's folders, `.git/` and `relais/` read-only, no network. The patch was validated path by
 * path before (validate-patch.ts, and git's own reading of it); the sandbox is the fence should
 * git ever read a path differently from both, and the judge checks the result afterwards.
 */
export async function applyPatch(
  git: Git,
  patch: string,
  sandbox?: SandboxPolicy,
): Promise<{ ok: true } | { ok: false; error: string }> {
  const check = await gitApply(git, ['apply', '--check', '--whitespace=nowarn', '-'], patch, sandbox);
  if (check.code !== 0) return { ok: false, error: `git apply --check: ${check.stderr.slice(0, 500)}` };
  const apply = await gitApply(git, ['apply', '--whitespace=nowarn', '-'], patch, sandbox);
  if (apply.code !== 0) return { ok: false, error: `git apply: ${apply.stderr.slice(0, 500)}` };
  return { ok: true };
}

async function gitApply(
  git: Git,
  args: readonly string[],
  patch: string,
  sandbox: SandboxPolicy | undefined,
): Promise<{ code: number; stderr: string }> {
  if (!sandbox) {
    const result = await git.run(args, { stdin: patch });
    return { code: result.code, stderr: result.stderr.trim() };
  }
  const command = git.command(args);
  const result = await runProcess({ ...command, cwd: git.root, stdin: patch, timeoutMs: 60_000, sandbox });
  return { code: result.exitCode ?? 1, stderr: result.stderrTail.trim() || (result.spawnError ?? '') };
}
