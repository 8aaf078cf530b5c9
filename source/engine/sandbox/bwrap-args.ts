import { basename, join } from 'node:path';
import type { SandboxPolicy } from './policy.js';

/**
 * The bwrap argv for one process (pure). Order matters: bwrap applies mounts in order, so the
 * read-only view of `/` comes first, then the writable folders, then `.git/` and `relais/` again
 * read-only on top of any writable folder that contains them.
 *
 * - `--unshare-pid` gives the process its own PID namespace, and `--die-with-parent` kills it when
 *   the runner (bwrap's parent) dies: when the namespace's init ends, the kernel ends every process
 *   in it, so a `setsid` daemon cannot outlive the step (issue 14, first escape).
 * - Each writable folder is its own bind mount: link(2) across mounts fails with EXDEV, so no hard
 *   link can join a writable path to a file outside it.
 * - `--new-session` detaches from the runner's terminal (no TIOCSTI keystroke injection).
 */
export function bwrapArgs(policy: SandboxPolicy, scratch: string, cwd: string): string[] {
  const home = join(scratch, 'home');
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--bind', scratch, scratch];
  for (const dir of policy.homeDirs) args.push('--bind', dir, join(home, basename(dir)));
  for (const dir of policy.writable) args.push('--bind', dir, dir);
  for (const path of policy.readOnly) args.push('--ro-bind', path, path);
  for (const file of policy.writableFiles) args.push('--bind', file, file);
  args.push('--unshare-pid', '--unshare-ipc', '--die-with-parent', '--new-session');
  if (!policy.network) args.push('--unshare-net');
  args.push('--chdir', cwd, '--');
  return args;
}

/** HOME and the temp folder inside the sandbox: private, thrown away with it. */
export function scratchEnv(scratch: string): Record<string, string> {
  const tmp = join(scratch, 'tmp');
  return { HOME: join(scratch, 'home'), TMPDIR: tmp, TMP: tmp, TEMP: tmp };
}
