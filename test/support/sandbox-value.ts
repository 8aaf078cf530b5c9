import { join } from 'node:path';
import type { Sandbox } from '../../source/engine/sandbox/sandbox.js';

/**
 * A resolved bwrap sandbox for `root` as `resolveSandbox` returns it (`.git/` and `relais/`
 * read-only, nothing writable outside, the host network for agents only), for the pure functions
 * that take one: a value, no bwrap is started.
 */
export function bwrapSandboxValue(
  root: string,
  extra: Partial<Extract<Sandbox, { kind: 'bwrap' }>> = {},
): Sandbox {
  return {
    kind: 'bwrap',
    bwrap: '/usr/bin/bwrap',
    root,
    readOnly: [join(root, '.git'), join(root, 'relais')],
    writableOutside: [],
    network: { agents: true, verification: false },
    homeFiles: [],
    hidden: [],
    agentConfigs: [],
    ...extra,
  };
}
