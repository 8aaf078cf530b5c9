import type { CommandIo } from '../io.js';
import { isCi } from './is-ci.js';

/**
 * docs/ARCHITECTURE.md "Flow of a run": the full-screen app only when a human is really there, on a real
 * terminal: stdin and stdout are TTYs, not in CI (`isCi`, Ink's own rule), `TERM` is not `dumb`,
 * and no `--json`.
 * Everything else gets the plain lines or NDJSON, with no escape codes.
 */
export type FrontEndKind = 'ink' | 'plain' | 'ndjson';

export function chooseFrontEnd(io: Pick<CommandIo, 'stdin' | 'stdout' | 'env'>, json: boolean): FrontEndKind {
  if (json) return 'ndjson';
  const terminal = io.stdin?.isTTY === true && io.stdout.isTTY === true;
  if (!terminal || isCi(io.env) || io.env.TERM === 'dumb') return 'plain';
  return 'ink';
}
