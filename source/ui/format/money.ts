import { type Held, spendWithHeld, usd } from '../../engine/protocol/money.js';

export { spendWithHeld, usd };

/**
 * "$0.4200 / $5.00 (8%)", or just the spend when there is no budget. `total` guards the cap (the
 * percentage is of it); the part of it `held` for calls that never reported a cost is said apart
 * ("$0.0100 spent + $3.00 held for 2 calls of unknown cost"), never shown as money spent.
 */
export function spendOfBudget(
  total: number,
  budget: number | null,
  held: Held = { usd: 0, calls: 0 },
  short = false,
): string {
  const amount = spendWithHeld(total, held, short);
  if (budget === null || budget <= 0) return amount;
  return `${amount} / ${usd(budget)} (${Math.round((total / budget) * 100)}%)`;
}
