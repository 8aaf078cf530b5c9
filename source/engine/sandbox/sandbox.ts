import { existsSync, realpathSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { findExecutable } from '../agents/find-executable.js';
import type { RelaisConfig } from '../protocol/config.js';
import { runProcess } from '../supervise/run-process.js';
import type { SandboxPolicy } from './policy.js';
import { isInside, outermost, writableDirsForGlobs } from './writable-paths.js';

/**
 * The run's sandbox, resolved once per run from the config (`sandbox`): bwrap found and proven to
 * work, the user's explicit opt-out, or unavailable (and then nothing may start: issue 14 "runs
 * refuse to start unless the user opts out explicitly"). Policies for each process derive from it.
 */
export type Sandbox =
  | {
      readonly kind: 'bwrap';
      readonly bwrap: string;
      readonly root: string;
      readonly readOnly: readonly string[];
      readonly writableOutside: readonly string[];
      readonly network: { readonly agents: boolean; readonly verification: boolean };
      readonly homeDirs: readonly string[];
      readonly homeFiles: readonly string[];
      /** Config folders the agents' own environment names (CODEX_HOME, CLAUDE_CONFIG_DIR): writable for agents. */
      readonly agentDirs: readonly string[];
    }
  | { readonly kind: 'off' }
  | { readonly kind: 'unavailable'; readonly reason: string };

export interface SandboxSettings {
  readonly mode: 'bwrap' | 'off';
  readonly network: { readonly agents: boolean; readonly verification: boolean };
  readonly writableOutside: readonly string[];
}

/** `"sandbox": "off"` is shorthand for `{ "mode": "off" }`. */
export function sandboxSettings(config: RelaisConfig): SandboxSettings {
  const raw = config.sandbox;
  if (typeof raw === 'string')
    return { mode: raw, network: { agents: true, verification: false }, writableOutside: [] };
  return { mode: raw.mode, network: raw.network, writableOutside: raw.writable_outside };
}

/** The fix printed wherever no sandbox can be had (doctor, BLOCKED.json). */
export const SANDBOX_FIX =
  'Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) and allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1), or set "sandbox": "off" in relais.config.json to run unprotected.';

/** What an agent's CLI keeps its login in, under HOME. */
const AGENT_HOME_ENTRIES = ['.claude', '.claude.json', '.codex'];

export async function resolveSandbox(
  config: RelaisConfig,
  root: string,
  env: NodeJS.ProcessEnv,
): Promise<Sandbox> {
  const settings = sandboxSettings(config);
  if (settings.mode === 'off') return { kind: 'off' };
  const probe = await probeBwrap(env, root);
  if (!probe.ok) return { kind: 'unavailable', reason: probe.reason };
  const realRoot = realpathSync(root);
  const readOnly = [join(realRoot, '.git'), join(realRoot, config.workspace_dir)].filter((p) =>
    existsSync(p),
  );
  const home = env.HOME ? safeReal(env.HOME) : null;
  const homeEntries = home
    ? AGENT_HOME_ENTRIES.map((name) => join(home, name)).filter((p) => existsSync(p))
    : [];
  return {
    kind: 'bwrap',
    bwrap: probe.bwrap,
    root: realRoot,
    readOnly,
    // Never the repository or a folder holding it: that would make the whole tree writable.
    writableOutside: settings.writableOutside
      .map(safeReal)
      .filter((p): p is string => p !== null && p !== realRoot && !isInside(p, realRoot)),
    network: settings.network,
    homeDirs: homeEntries.filter((p) => statSync(p).isDirectory()),
    homeFiles: homeEntries.filter((p) => statSync(p).isFile()),
    agentDirs: agentConfigDirs(config, env, realRoot),
  };
}

/**
 * The policy for an agent: writable where the task may write (the whole repository when no task
 * scope applies), `.git/` and the workspace read-only, the host network unless configured off.
 */
export function agentSandbox(
  sandbox: Sandbox,
  allowedGlobs?: readonly string[],
  writableFiles: readonly string[] = [],
): SandboxPolicy | undefined {
  return policyFor(sandbox, allowedGlobs, 'agents', writableFiles);
}

/** The policy for a verification command: the same writable paths, no network by default. */
export function verificationSandbox(
  sandbox: Sandbox,
  allowedGlobs?: readonly string[],
): SandboxPolicy | undefined {
  return policyFor(sandbox, allowedGlobs, 'verification');
}

function policyFor(
  sandbox: Sandbox,
  allowedGlobs: readonly string[] | undefined,
  role: 'agents' | 'verification',
  writableFiles: readonly string[] = [],
): SandboxPolicy | undefined {
  if (sandbox.kind === 'off') return undefined;
  // A run never gets here without a sandbox (preflight refuses it); fail closed if one does.
  if (sandbox.kind === 'unavailable') throw new Error(`no sandbox available: ${sandbox.reason}`);
  const inRepo = allowedGlobs
    ? writableDirsForGlobs(sandbox.root, allowedGlobs, sandbox.readOnly)
    : [sandbox.root];
  return {
    kind: 'bwrap',
    bwrap: sandbox.bwrap,
    root: sandbox.root,
    writable: outermost([
      ...inRepo,
      ...sandbox.writableOutside,
      ...(role === 'agents' ? sandbox.agentDirs : []),
    ]),
    readOnly: sandbox.readOnly,
    writableFiles,
    homeDirs: role === 'agents' ? sandbox.homeDirs : [],
    homeFiles: role === 'agents' ? sandbox.homeFiles : [],
    network: sandbox.network[role],
  };
}

/**
 * The same sandbox for another working tree of the repository (a parallel lane's worktree,
 * issue 19): the task's paths resolve against that tree, and its own `.git` and workspace are the
 * read-only ones. Without this a lane's worktree, which lives under the main tree's read-only
 * workspace, could not be written by its own builder. Nothing else widens: the rest of the
 * filesystem (the main tree included) stays read-only.
 */
export function sandboxForTree(sandbox: Sandbox, treeRoot: string): Sandbox {
  if (sandbox.kind !== 'bwrap') return sandbox;
  const real = safeReal(treeRoot);
  if (real === null || real === sandbox.root) return sandbox;
  const readOnly = sandbox.readOnly
    .map((path) => join(real, relative(sandbox.root, path)))
    .filter((path) => existsSync(path));
  return { ...sandbox, root: real, readOnly };
}

/** Names the sandbox a run's processes use, for reports and events. */
export function sandboxLabel(sandbox: Sandbox): 'bwrap' | 'off' | 'unavailable' {
  return sandbox.kind;
}

const probes = new Map<string, Promise<{ ok: true; bwrap: string } | { ok: false; reason: string }>>();

/**
 * bwrap present is not enough: without user namespaces (or setuid) it fails at start, so a tiny
 * sandbox is really started once per process and its verdict kept.
 */
export function probeBwrap(
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<{ ok: true; bwrap: string } | { ok: false; reason: string }> {
  const key = env.PATH ?? '';
  let probe = probes.get(key);
  if (!probe) {
    probe = (async () => {
      const bwrap = await findExecutable('bwrap', env, cwd);
      if (!bwrap) return { ok: false as const, reason: 'bwrap (bubblewrap) is not installed or not on PATH' };
      const run = await runProcess({
        cmd: bwrap,
        args: [
          '--ro-bind',
          '/',
          '/',
          '--dev',
          '/dev',
          '--proc',
          '/proc',
          '--unshare-pid',
          '--die-with-parent',
          '--',
          'true',
        ],
        cwd: '/',
        env,
        timeoutMs: 10_000,
      });
      if (run.exitCode === 0) return { ok: true as const, bwrap };
      const said = run.stderrTail.trim().split('\n').at(-1) ?? '';
      return {
        ok: false as const,
        reason: `bwrap cannot create a sandbox here (${said || `exit ${run.exitCode}`})`,
      };
    })();
    probes.set(key, probe);
  }
  return probe;
}

/**
 * An agent CLI told where its login and state live (CODEX_HOME, CLAUDE_CONFIG_DIR, in the runner's
 * environment or the config's extra_env) writes there at every start: without it writable, Codex
 * exits at once inside the sandbox. Never a folder inside the repository (that would widen the fence).
 */
function agentConfigDirs(config: RelaisConfig, env: NodeJS.ProcessEnv, realRoot: string): string[] {
  const named = [
    env.CODEX_HOME,
    env.CLAUDE_CONFIG_DIR,
    config.codex_cli?.extra_env?.CODEX_HOME,
    config.codex_cli?.extra_env?.CLAUDE_CONFIG_DIR,
  ];
  const dirs = named
    .filter((p): p is string => typeof p === 'string' && p.length > 0)
    .map(safeReal)
    .filter(
      (p): p is string => p !== null && p !== realRoot && !isInside(p, realRoot) && !isInside(realRoot, p),
    )
    .filter((p) => statSync(p).isDirectory());
  return [...new Set(dirs)];
}

function safeReal(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}
