/**
 * Durations and clocks as a human reads them in a status line: short, fixed units, no decimals
 * above a minute.
 */

/** 950 -> "0.9s", 12_300 -> "12s", 184_000 -> "3m04s", 3_720_000 -> "1h02m". */
export function duration(ms: number): string {
  const safe = Math.max(0, ms);
  if (safe < 10_000) return `${(Math.floor(safe / 100) / 10).toFixed(1)}s`;
  const seconds = Math.floor(safe / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${pad2(seconds % 60)}s`;
  return `${Math.floor(minutes / 60)}h${pad2(minutes % 60)}m`;
}

/** A stopwatch: "03:12", or "1:02:03" past an hour. */
export function stopwatch(ms: number): string {
  const seconds = Math.floor(Math.max(0, ms) / 1000);
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return h > 0 ? `${h}:${pad2(m)}:${pad2(s)}` : `${pad2(m)}:${pad2(s)}`;
}

/** How long ago, for "last output 4s ago". */
export function ago(thenMs: number, nowMs: number): string {
  const seconds = Math.max(0, Math.floor((nowMs - thenMs) / 1000));
  if (seconds < 60) return `${seconds}s ago`;
  return `${duration(seconds * 1000)} ago`;
}

/** Wall-clock time of day in the local zone, "14:30:05". */
export function timeOfDay(ms: number): string {
  const d = new Date(ms);
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
}

/** An event's ISO stamp as epoch ms (a malformed stamp counts as "now" rather than NaN). */
export function epochOf(iso: string, fallback: number): number {
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms : fallback;
}

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}
