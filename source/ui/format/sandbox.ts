/**
 * Which OS sandbox a tick ran in (issue 14's `sandbox` field on judge.finished and tick.finished).
 * Read defensively: an engine without the field sends nothing and the app shows nothing; a value
 * the app does not know is not shown either (never a guess about isolation).
 */
export type SandboxShown = 'bwrap' | 'off' | 'unavailable';

const KNOWN: ReadonlySet<string> = new Set(['bwrap', 'off', 'unavailable']);

export function sandboxOf(event: object): SandboxShown | null {
  const value = (event as { sandbox?: unknown }).sandbox;
  return typeof value === 'string' && KNOWN.has(value) ? (value as SandboxShown) : null;
}

/** `sandbox: bwrap`, `sandbox: off (config)`, `sandbox: unavailable (no bubblewrap)`. */
export function sandboxWords(sandbox: SandboxShown): string {
  if (sandbox === 'bwrap') return 'sandbox: bwrap';
  if (sandbox === 'off') return 'sandbox: off (turned off in the config)';
  return 'sandbox: unavailable (ran without one)';
}
