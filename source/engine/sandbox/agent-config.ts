import { existsSync, lstatSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The agent CLIs' own config folders (`~/.claude`, `~/.codex`, a `CLAUDE_CONFIG_DIR` or
 * `CODEX_HOME`) inside the sandbox. Bound writable, they were a way out: a builder could plant
 * hooks, settings, commands or an MCP server there, and the user's next interactive `claude` or
 * `codex` would run them outside any sandbox (the same class of escape as `.git/hooks`).
 *
 * So each folder is a private overlay: a fresh folder of the sandbox's scratch, thrown away with
 * it, into which the user's entries are bound one by one.
 * - Read-only: everything that says what the CLI does (settings, hooks, commands, agents, skills,
 *   plugins, instructions, `config.toml`...) and anything this table does not know.
 * - A private copy, put back only when it is a refreshed login of the same shape (login-files.ts):
 *   the login file the CLI refreshes (`.credentials.json`, `auth.json`); losing a refreshed token
 *   would log the user out, and a writable original could be swapped by a builder.
 * - Copied in: state the CLI reads and rewrites at every start (`.claude.json`, Codex's
 *   `installation_id`); the copy's changes are thrown away.
 * - Left out: the CLI's runtime state (sessions, logs, caches, databases, transcripts): the CLI
 *   starts them afresh in the overlay. Relais runs the CLIs without session persistence, so
 *   nothing a later run needs is lost.
 *
 * Which entries are which was found by running the real binaries (claude 2.1.x, codex 0.169)
 * against the scripted models with a used config folder bound this way (test/redteam/agent-config).
 */

export type AgentCli = 'claude' | 'codex';

export interface AgentConfigOverlay {
  /** Where the CLI finds it inside the sandbox: a name under the scratch HOME, or its own path. */
  readonly at: { readonly home: string } | { readonly path: string };
  /** The user's entries bound read-only (absolute host paths). */
  readonly readOnly: readonly string[];
  /** The user's login files (absolute host paths): copied in, refreshes put back (login-files.ts). */
  readonly logins: readonly string[];
  /** Entries copied into the overlay; what the CLI writes to the copy is thrown away. */
  readonly copied: readonly string[];
}

interface Layout {
  readonly login: readonly string[];
  readonly copied: readonly string[];
  /** Runtime state: names, or a test on the name (databases and their journals). */
  readonly state: readonly string[];
  readonly statePattern?: RegExp;
}

const LAYOUTS: Record<AgentCli, Layout> = {
  // Claude Code's own list of runtime entries (what it leaves out of a config snapshot), the ones
  // seen in 2.1.x.
  claude: {
    login: ['.credentials.json'],
    copied: ['.claude.json'],
    state: [
      'projects',
      'sessions',
      'todos',
      'shell-snapshots',
      'statsig',
      'file-history',
      'history.jsonl',
      'ide',
      'logs',
      'backups',
      'plans',
      'telemetry',
      'debug',
      'traces',
      'cache',
      'session-env',
      'paste-cache',
      'image-cache',
      'stats-cache.json',
      'tasks',
      'teams',
      'jobs',
      'daemon',
      'usage-data',
      'shares',
      'state',
      'uploads',
      'downloads',
      'feedback',
      'startup-perf',
      'mcp-needs-auth-cache.json',
      'active-time.json',
    ],
    statePattern: /^\.claude\.json\.(backup|lock|tmp)/,
  },
  codex: {
    login: ['auth.json'],
    // Opened read-write at every start (read-only, Codex fails to start).
    copied: ['installation_id'],
    state: [
      'sessions',
      'archived_sessions',
      'log',
      'logs',
      'shell_snapshots',
      '.tmp',
      'tmp',
      'history.jsonl',
      'cache',
      'models_cache.json',
      'version.json',
      '.sandbox_migration',
    ],
    statePattern: /\.sqlite(-wal|-shm|-journal)?$/,
  },
};

/** The overlay of one config folder, from what the folder holds now (at each process start). */
export function agentConfigOverlay(
  cli: AgentCli,
  hostDir: string,
  at: AgentConfigOverlay['at'],
): AgentConfigOverlay {
  const layout = LAYOUTS[cli];
  const readOnly: string[] = [];
  const logins: string[] = [];
  const copied: string[] = [];
  for (const name of entriesOf(hostDir)) {
    const path = join(hostDir, name);
    if (layout.login.includes(name)) {
      // Only a regular file is copied in: a folder or a symlink there could hold anything.
      if (isPlainFile(path)) logins.push(path);
    } else if (layout.copied.includes(name)) {
      if (isPlainFile(path)) copied.push(path);
    } else if (!layout.state.includes(name) && !layout.statePattern?.test(name)) {
      readOnly.push(path);
    }
  }
  return { at, readOnly, logins, copied };
}

function entriesOf(dir: string): string[] {
  try {
    return existsSync(dir) && statSync(dir).isDirectory() ? readdirSync(dir).sort() : [];
  } catch {
    return [];
  }
}

function isPlainFile(path: string): boolean {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}
