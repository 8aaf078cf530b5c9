import { basename, join } from 'node:path';
import type { AgentConfigOverlay } from './agent-config.js';
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
 * - The user's credential stores (credential-stores.ts) are covered right after the read-only
 *   root: an empty read-only tmpfs over a folder, /dev/null over a file.
 * - An agent CLI's config folder is its private overlay (scratch/config/<n>, made by makeScratch)
 *   with the user's entries bound into it one by one (agent-config.ts), its login a private copy.
 */
export function bwrapArgs(policy: SandboxPolicy, scratch: string, cwd: string): string[] {
  const home = join(scratch, 'home');
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  for (const { path, kind } of policy.hidden)
    args.push(
      ...(kind === 'dir' ? ['--tmpfs', path, '--remount-ro', path] : ['--ro-bind', '/dev/null', path]),
    );
  args.push('--bind', scratch, scratch);
  policy.agentConfigs.forEach((overlay, index) => {
    args.push(...overlayArgs(overlay, configScratch(scratch, index), home));
  });
  for (const dir of policy.writable) args.push('--bind', dir, dir);
  for (const path of policy.readOnly) args.push('--ro-bind', path, path);
  for (const file of policy.writableFiles) args.push('--bind', file, file);
  args.push('--unshare-pid', '--unshare-ipc', '--die-with-parent', '--new-session');
  if (!policy.network) args.push('--unshare-net');
  args.push('--chdir', cwd, '--');
  return args;
}

/** The private folder of the `index`th agent config overlay, inside the scratch. */
export function configScratch(scratch: string, index: number): string {
  return join(scratch, 'config', String(index));
}

function overlayArgs(overlay: AgentConfigOverlay, privateDir: string, home: string): string[] {
  const target = 'home' in overlay.at ? join(home, overlay.at.home) : overlay.at.path;
  const args = ['--bind', privateDir, target];
  for (const path of overlay.readOnly) args.push('--ro-bind', path, join(target, basename(path)));
  // The login files are not bound: their private copies are in the overlay already (scratch.ts).
  return args;
}

/** HOME and the temp folder inside the sandbox: private, thrown away with it. */
export function scratchEnv(scratch: string): Record<string, string> {
  const tmp = join(scratch, 'tmp');
  return { HOME: join(scratch, 'home'), TMPDIR: tmp, TMP: tmp, TEMP: tmp };
}

/**
 * Variables that hand a sandboxed process a door out of the sandbox: agent sockets and session
 * buses (a D-Bus session can start commands outside it, an SSH agent signs as the user), display
 * servers, the fleet's database (a builder could lift the fleet's budget or answer its gates), and
 * GitHub tokens.
 * The files they point to may still exist on the read-only filesystem; without the variable a
 * process has to go looking for them, and docs/sandbox.md says what remains.
 */
const HOST_DOORS = [
  'SSH_AUTH_SOCK',
  'SSH_AGENT_PID',
  'GPG_AGENT_INFO',
  'DBUS_SESSION_BUS_ADDRESS',
  'DBUS_SYSTEM_BUS_ADDRESS',
  'DISPLAY',
  'WAYLAND_DISPLAY',
  'XAUTHORITY',
  'DOCKER_HOST',
  'RELAIS_FLEET_DB',
  'DATABASE_URL',
  // GitHub tokens: the runner opens the pull request itself, outside the sandbox; inside, a
  // token would let a builder with the network push or comment as the user.
  'GH_TOKEN',
  'GITHUB_TOKEN',
  'GH_ENTERPRISE_TOKEN',
  'GITHUB_ENTERPRISE_TOKEN',
];

/**
 * The environment of a sandboxed process: the caller's, without HOST_DOORS, PG* settings or the
 * role's secrets (`drop`, secret-env.ts), with a private HOME and temp.
 */
export function sandboxEnv(
  env: NodeJS.ProcessEnv,
  scratch: string,
  drop: readonly string[] = [],
): NodeJS.ProcessEnv {
  const kept: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env))
    if (!HOST_DOORS.includes(name) && !drop.includes(name) && !/^PG[A-Z_]+$/.test(name)) kept[name] = value;
  return { ...kept, ...scratchEnv(scratch) };
}
