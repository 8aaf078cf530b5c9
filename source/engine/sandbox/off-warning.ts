import type { EngineBus } from '../events.js';
import type { Sandbox } from './sandbox.js';

/**
 * `"sandbox": "off"` is never silent (issue 14): every engine that starts agents or verifications
 * (a tick, `ralphy start`, `relais cycle`, `relais plan`, `relais cycle init`) says so on its bus,
 * which every front end prints, and REPORT.md repeats it.
 */
export const SANDBOX_OFF_WARNING =
  'sandbox is "off" in relais.config.json: agents and verifications run unprotected (no PID namespace, no write fence)';

export function warnIfSandboxOff(sandbox: Sandbox, bus: EngineBus): void {
  if (sandbox.kind === 'off') bus.emit({ type: 'log', level: 'warn', message: SANDBOX_OFF_WARNING });
}
