/** Dollars as the header shows them: cents above a dollar, four decimals below (agent calls are cheap). */
export function usd(amount: number): string {
  return amount >= 1 ? `$${amount.toFixed(2)}` : `$${amount.toFixed(4)}`;
}

/**
 * "$0.4200 / $5.00 (8%)", or just the spend when there is no budget. `total` guards the cap; of
 * it, `held` is the maximum held for calls that never reported a cost: that part is said apart
 * ("$0.0100 spent + $3.00 held for 2 calls of unknown cost"), never shown as money spent.
 */
export function spendOfBudget(
  total: number,
  budget: number | null,
  held: { readonly usd: number; readonly calls: number } = { usd: 0, calls: 0 },
): string {
  const amount = held.calls > 0 ? knownAndHeld(total, held) : usd(total);
  if (budget === null || budget <= 0) return amount;
  return `${amount} / ${usd(budget)} (${Math.round((total / budget) * 100)}%)`;
}

/** "$0.0100 spent + $3.00 held for 2 calls of unknown cost". */
export function knownAndHeld(total: number, held: { readonly usd: number; readonly calls: number }): string {
  const known = Math.max(0, total - held.usd);
  const calls = `${held.calls} call${held.calls === 1 ? '' : 's'}`;
  return `${usd(known)} spent + ${usd(held.usd)} held for ${calls} of unknown cost`;
}
