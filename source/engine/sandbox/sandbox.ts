import { existsSync, realpathSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { findRunnerTool } from '../agents/find-executable.js';
import type { AgentRole } from '../events.js';
import type { RelaisConfig } from '../protocol/config.js';
import { runProcess } from '../supervise/run-process.js';
import { type AgentCli, type AgentConfigOverlay, agentConfigOverlay } from './agent-config.js';
import { credentialStores, type HiddenPath } from './credential-stores.js';
import type { SandboxPolicy } from './policy.js';
import { secretEnvFor } from './secret-env.js';
import {
  isInside,
  makeMissingCacheFolders,
  outermost,
  staticPrefix,
  writableDirsForGlobs,
} from './writable-paths.js';

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
      /** Repository globs every verification may also write (`sandbox.verification_writable`). */
      readonly verificationWritable?: readonly string[];
      readonly network: NetworkSettings;
      readonly homeFiles: readonly string[];
      /** The user's credential stores under the real HOME, hidden from every sandboxed process. */
      readonly hidden: readonly HiddenPath[];
      /**
       * The agent CLIs' config folders on the host (~/.claude, ~/.codex, and the CODEX_HOME or
       * CLAUDE_CONFIG_DIR the agents' environment names): each one a private overlay for agents.
       */
      readonly agentConfigs: readonly AgentConfigDir[];
    }
  | { readonly kind: 'off' }
  | { readonly kind: 'unavailable'; readonly reason: string };

export interface AgentConfigDir {
  readonly cli: AgentCli;
  /** The folder on the host (resolved). */
  readonly dir: string;
  readonly at: AgentConfigOverlay['at'];
}

/**
 * Who gets the host network: `agents` is every agent role's default, a role named on its own
 * (`builder: false`, say) overrides it for that role only; verification has its own switch.
 */
export interface NetworkSettings {
  readonly agents: boolean;
  readonly verification: boolean;
  readonly roles?: Partial<Record<AgentRole, boolean>>;
}

export interface SandboxSettings {
  readonly mode: 'bwrap' | 'off';
  readonly network: NetworkSettings;
  readonly writableOutside: readonly string[];
  readonly verificationWritable: readonly string[];
}

/** `"sandbox": "off"` is shorthand for `{ "mode": "off" }`. */
export function sandboxSettings(config: RelaisConfig): SandboxSettings {
  const raw = config.sandbox;
  if (typeof raw === 'string')
    return {
      mode: raw,
      network: { agents: true, verification: false },
      writableOutside: [],
      verificationWritable: [],
    };
  const { agents, verification, ...roles } = raw.network;
  return {
    mode: raw.mode,
    network: { agents, verification, roles },
    writableOutside: raw.writable_outside,
    verificationWritable: raw.verification_writable,
  };
}

/** Whether a process of `role` gets the host network. */
export function networkFor(network: NetworkSettings, role: AgentRole | 'verification'): boolean {
  if (role === 'verification') return network.verification;
  return network.roles?.[role] ?? network.agents;
}

/** The fix printed wherever no sandbox can be had (doctor, BLOCKED.json). */
export const SANDBOX_FIX =
  'Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) and allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1), or set "sandbox": "off" in relais.config.json to run unprotected.';

/** What an agent's CLI keeps its login and config in, under HOME. */
const AGENT_HOME_DIRS: ReadonlyArray<{ name: string; cli: AgentCli }> = [
  { name: '.claude', cli: 'claude' },
  { name: '.codex', cli: 'codex' },
];
const AGENT_HOME_FILES = ['.claude.json'];

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
  const homeFiles = home ? AGENT_HOME_FILES.map((name) => join(home, name)).filter((p) => isFile(p)) : [];
  const homeDirs: AgentConfigDir[] = home
    ? AGENT_HOME_DIRS.map(({ name, cli }) => ({ cli, dir: join(home, name), at: { home: name } })).filter(
        (d) => isDir(d.dir),
      )
    : [];
  // Never the repository or a folder holding it: that would make the whole tree writable.
  const writableOutside = settings.writableOutside
    .map(safeReal)
    .filter((p): p is string => p !== null && p !== realRoot && !isInside(p, realRoot));
  const agentConfigs = [...homeDirs, ...agentConfigDirs(config, env, realRoot)];
  return {
    kind: 'bwrap',
    bwrap: probe.bwrap,
    root: realRoot,
    readOnly,
    writableOutside,
    verificationWritable: settings.verificationWritable,
    network: settings.network,
    homeFiles,
    hidden: home
      ? credentialStores(home, [realRoot, ...writableOutside, ...agentConfigs.map((d) => d.dir)])
      : [],
    agentConfigs,
  };
}

/**
 * The policy for an agent of `role`: writable where its work may write (the task's allowed globs,
 * reduced to folders), nothing in the repository when none are given (planning, mapping: fail
 * closed), `.git/` and the workspace read-only, the host network unless configured off.
 */
export function agentSandbox(
  sandbox: Sandbox,
  allowedGlobs?: readonly string[],
  writableFiles: readonly string[] = [],
  role: AgentRole = 'builder',
): SandboxPolicy | undefined {
  return policyFor(sandbox, allowedGlobs ?? [], role, writableFiles);
}

/**
 * The policy for a verification command: the task's allowed globs plus the configured
 * `sandbox.verification_writable` (a tool's cache folder in the repository), no network by
 * default. Without globs, only the configured ones.
 */
export function verificationSandbox(
  sandbox: Sandbox,
  allowedGlobs?: readonly string[],
): SandboxPolicy | undefined {
  const policy = policyFor(sandbox, allowedGlobs ?? [], 'verification');
  if (!policy || sandbox.kind !== 'bwrap') return policy;
  // The configured folders as they are: one that does not exist yet is made when its parent
  // exists, never widened to that parent (for `node_modules/.cache/**` the whole tree).
  makeMissingCacheFolders(sandbox.root, sandbox.verificationWritable ?? [], sandbox.readOnly);
  const extra = writableDirsForGlobs(
    sandbox.root,
    sandbox.verificationWritable ?? [],
    sandbox.readOnly,
    false,
  );
  return { ...policy, writable: outermost([...policy.writable, ...extra]) };
}

/** The folders a process fenced to `allowedGlobs` may write: theirs, and `writable_outside`. */
export function writableFolders(
  sandbox: Extract<Sandbox, { kind: 'bwrap' }>,
  allowedGlobs: readonly string[],
): string[] {
  const inRepo = writableDirsForGlobs(sandbox.root, allowedGlobs, sandbox.readOnly);
  return outermost([...inRepo, ...sandbox.writableOutside]);
}

function policyFor(
  sandbox: Sandbox,
  allowedGlobs: readonly string[],
  role: AgentRole | 'verification',
  writableFiles: readonly string[] = [],
): SandboxPolicy | undefined {
  if (sandbox.kind === 'off') return undefined;
  // A run never gets here without a sandbox (preflight refuses it); fail closed if one does.
  if (sandbox.kind === 'unavailable') throw new Error(`no sandbox available: ${sandbox.reason}`);
  const isAgent = role !== 'verification';
  return {
    kind: 'bwrap',
    bwrap: sandbox.bwrap,
    root: sandbox.root,
    writable: writableFolders(sandbox, allowedGlobs),
    readOnly: sandbox.readOnly,
    writableFiles,
    // Listed now, at each process start: the overlay binds what the folder holds at this moment.
    agentConfigs: isAgent ? sandbox.agentConfigs.map((d) => agentConfigOverlay(d.cli, d.dir, d.at)) : [],
    homeFiles: isAgent ? sandbox.homeFiles : [],
    hidden: sandbox.hidden,
    network: networkFor(sandbox.network, role),
    dropEnv: secretEnvFor(isAgent ? 'agents' : 'verification'),
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

/**
 * Everything a tick's sandboxed processes can write in the tree `treeRoot`, as repository paths
 * (folders end in `/`): the task's folders (bound writable for its builder and its checks), the
 * checks' `verification_writable` folders (their static prefix, which the checks' sandbox makes
 * when it is missing) and single writable files (a driver's result file). Null without the
 * sandbox, or when the root itself is writable: then any path can change.
 */
export function writableInTree(
  sandbox: Sandbox,
  treeRoot: string,
  allowedGlobs: readonly string[],
  files: readonly string[] = [],
): string[] | null {
  const tree = sandboxForTree(sandbox, treeRoot);
  if (tree.kind !== 'bwrap') return null;
  const folders = writableDirsForGlobs(tree.root, allowedGlobs, tree.readOnly);
  const caches = (tree.verificationWritable ?? []).map((glob) => {
    const path = join(tree.root, staticPrefix(glob));
    return safeReal(path) ?? path;
  });
  // A `writable_outside` folder that lies in the tree is bound writable to every process too.
  const outsideInTree = tree.writableOutside.filter((dir) => isInside(tree.root, dir));
  const paths = [...folders, ...caches, ...outsideInTree].map((dir) => relative(tree.root, dir));
  if (paths.some((rel) => rel === '' || rel.startsWith('..'))) return null;
  const inTree = files
    .map((file) => relative(tree.root, file))
    .filter((rel) => rel !== '' && !rel.startsWith('..'));
  return [...new Set([...paths.map((rel) => `${rel}/`), ...inTree])].sort();
}

/**
 * Whether every allowed glob names a folder that exists, so that `writableInTree` (and the binds of
 * a process fenced to those globs) gives the same folders whenever it is read again: a missing
 * folder is widened to its parent, and a process bound to that parent can make the folder and so
 * narrow the set read later. With every folder there, a process bound to them can remove none
 * (each is a mount point, or lies inside one that stays), so the set cannot move.
 */
export function writableFoldersSettled(
  sandbox: Sandbox,
  treeRoot: string,
  allowedGlobs: readonly string[],
): boolean {
  const tree = sandboxForTree(sandbox, treeRoot);
  if (tree.kind !== 'bwrap') return false;
  const widened = writableDirsForGlobs(tree.root, allowedGlobs, tree.readOnly);
  const exact = writableDirsForGlobs(tree.root, allowedGlobs, tree.readOnly, false);
  return widened.length === exact.length && widened.every((dir, i) => dir === exact[i]);
}

/**
 * The writable set the ignored snapshot may be narrowed to (`narrowToWritable`): null when
 * `writable_outside` names any folder. A file there can share its inode with an ignored file in
 * the tree (a package store hard-linked into `node_modules/`), and a write through that other name
 * changes the ignored file without writing its folder, which a narrowed snapshot would not watch.
 * (A tracked file changed so is still seen: the checks' whole-tree look before VERIFY, the next
 * preflight's status.)
 */
export function ignoredWatchSet(
  sandbox: Sandbox,
  writable: readonly string[] | null,
): readonly string[] | null {
  return sandbox.kind === 'bwrap' && sandbox.writableOutside.length === 0 ? writable : null;
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
  // The lookup skips PATH folders inside `cwd` (the repository): the key holds both.
  const key = `${cwd}\0${env.PATH ?? ''}`;
  let probe = probes.get(key);
  if (!probe) {
    probe = (async () => {
      // Never a bwrap a builder or a verification could have planted in the repository.
      const bwrap = await findRunnerTool('bwrap', env, cwd);
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
        ownPidNamespace: true,
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
 * environment or the config's extra_env of either CLI) reads and writes there at every start:
 * without it, Codex exits at once inside the sandbox. It becomes a private overlay at its own
 * path. Never a folder inside the repository, nor one holding it (that would widen the fence).
 */
function agentConfigDirs(config: RelaisConfig, env: NodeJS.ProcessEnv, realRoot: string): AgentConfigDir[] {
  const named: Array<{ cli: AgentCli; path: string | undefined }> = [
    { cli: 'codex', path: env.CODEX_HOME },
    { cli: 'claude', path: env.CLAUDE_CONFIG_DIR },
    { cli: 'codex', path: config.codex_cli?.extra_env?.CODEX_HOME },
    { cli: 'claude', path: config.codex_cli?.extra_env?.CLAUDE_CONFIG_DIR },
    { cli: 'codex', path: config.claude_code_cli?.extra_env?.CODEX_HOME },
    { cli: 'claude', path: config.claude_code_cli?.extra_env?.CLAUDE_CONFIG_DIR },
  ];
  const dirs: AgentConfigDir[] = [];
  for (const { cli, path } of named) {
    const real = path ? safeReal(path) : null;
    if (real === null || real === realRoot || isInside(real, realRoot) || isInside(realRoot, real)) continue;
    if (!isDir(real) || dirs.some((d) => d.dir === real)) continue;
    dirs.push({ cli, dir: real, at: { path: real } });
  }
  return dirs;
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export function safeReal(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}
