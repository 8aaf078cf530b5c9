import { approveAll, denyAll, type GatePort } from '../../engine/index.js';
import type { CommandIo } from '../io.js';
import { isCi } from './is-ci.js';
import { promptGates } from './prompt-gates.js';

/**
 * Who answers the engine's gates (docs/ARCHITECTURE.md "Flow of a run"): `--yes` approves every yes/no
 * gate; else the full-screen app's keys when it runs; else a `[y/n]` prompt when a human is at a
 * terminal (stdin and stdout TTYs, not in CI by `isCi`, no `--json`); else nobody (every gate refused).
 */
export function chooseGates(
  io: CommandIo,
  options: { readonly json: boolean; readonly yes: boolean; readonly appGates: GatePort | null },
): { readonly gates: GatePort; close(): void } {
  if (options.yes) return { gates: approveAll, close: () => undefined };
  if (options.appGates) return { gates: options.appGates, close: () => undefined };
  const human = io.stdin?.isTTY === true && io.stdout.isTTY === true && !isCi(io.env) && !options.json;
  if (!human || !io.stdin) return { gates: denyAll, close: () => undefined };
  const prompt = promptGates(io.stdin, io.stdout);
  return { gates: prompt, close: () => prompt.close() };
}
