import type { CommandIo } from '../io.js';

/**
 * DESIGN.md "Flow of a run": the full-screen app only when a human is really there, on a real
 * terminal: stdin and stdout are TTYs, `CI` is unset, `TERM` is not `dumb`, and no `--json`.
 * Everything else gets the plain lines or NDJSON, with no escape codes.
 */
export type FrontEndKind = 'ink' | 'plain' | 'ndjson';

export function chooseFrontEnd(io: Pick<CommandIo, 'stdin' | 'stdout' | 'env'>, json: boolean): FrontEndKind {
  if (json) return 'ndjson';
  const terminal = io.stdin?.isTTY === true && io.stdout.isTTY === true;
  const ci = io.env.CI !== undefined && io.env.CI !== '' && io.env.CI !== '0' && io.env.CI !== 'false';
  if (!terminal || ci || io.env.TERM === 'dumb') return 'plain';
  return 'ink';
}
