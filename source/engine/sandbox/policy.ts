import type { AgentConfigOverlay } from './agent-config.js';
import type { HiddenPath } from './credential-stores.js';

/**
 * What one sandboxed process may do (docs/ARCHITECTURE.md "The OS sandbox", docs/sandbox.md, issue 14). Every path is absolute and
 * already resolved through symlinks, so the bwrap argv built from it binds exactly what was checked.
 */
export interface SandboxPolicy {
  readonly kind: 'bwrap';
  /** The bwrap program found on PATH. */
  readonly bwrap: string;
  /** The repository root (resolved). */
  readonly root: string;
  /** Folders bound writable: the task's allowed paths (their static prefixes) and any configured extras. */
  readonly writable: readonly string[];
  /**
   * Single runner-made files bound writable on top of the read-only ones (an external driver's
   * result file in the workspace); written in place, never replaced by rename.
   */
  readonly writableFiles: readonly string[];
  /** Bound read-only after the writable ones, so they stay read-only inside them: `.git/`, `relais/`. */
  readonly readOnly: readonly string[];
  /**
   * The agent CLIs' config folders (~/.claude, ~/.codex, CLAUDE_CONFIG_DIR, CODEX_HOME), each a
   * private overlay: the user's config read-only, the login file writable, the rest thrown away
   * (agent-config.ts).
   */
  readonly agentConfigs: readonly AgentConfigOverlay[];
  /** The user's credential stores under the real HOME (~/.ssh, ~/.config/gh...): hidden. */
  readonly hidden: readonly HiddenPath[];
  /** Files of the real HOME the agent needs (~/.claude.json), copied into the scratch HOME. */
  readonly homeFiles: readonly string[];
  /** Host network (agents reach their API) or none at all (verification's default). */
  readonly network: boolean;
  /** Secret variables of the runner's environment the process starts without (secret-env.ts). */
  readonly dropEnv?: readonly string[];
}

/** Which sandbox a tick's processes ran in, as reports and events name it. */
export type SandboxKind = 'bwrap' | 'off';

export function sandboxKindOf(policy: SandboxPolicy | null | undefined): SandboxKind {
  return policy ? policy.kind : 'off';
}
