/**
 * Dollars as every display shows them (the app's header and phases, `ralphy status`, `relais
 * status`), so the same spend never reads as two different numbers: cents above a dollar, four
 * decimals below (agent calls are cheap).
 */
export function usd(amount: number): string {
  return amount >= 1 ? `$${amount.toFixed(2)}` : `$${amount.toFixed(4)}`;
}

/** Calls that never reported a cost (killed, interrupted): the maximum held for them, and how many. */
export interface Held {
  readonly usd: number;
  readonly calls: number;
}

/**
 * A cap-guarding `total` said truthfully: "$0.0100 spent + $3.00 held for 2 calls of unknown
 * cost" when part of it is held for calls that never reported a cost, else just the amount.
 */
export function spendWithHeld(total: number, held: Held, short = false): string {
  if (held.calls <= 0) return usd(total);
  const known = Math.max(0, total - held.usd);
  // Where a line has little room (a phase row, a narrow header): "$0.0100 + $3.00 held (2 unknown)".
  if (short) return `${usd(known)} + ${held.usd > 0 ? `${usd(held.usd)} held ` : ''}(${held.calls} unknown)`;
  const calls = `${held.calls} call${held.calls === 1 ? '' : 's'}`;
  // A call that reserved nothing beforehand holds nothing: its cost is simply not known.
  if (held.usd <= 0) return `${usd(known)} spent + ${calls} of unknown cost`;
  return `${usd(known)} spent + ${usd(held.usd)} held for ${calls} of unknown cost`;
}
