/** Dollars as the header shows them: cents above a dollar, four decimals below (agent calls are cheap). */
export function usd(amount: number): string {
  return amount >= 1 ? `$${amount.toFixed(2)}` : `$${amount.toFixed(4)}`;
}

/** "$0.4200 / $5.00 (8%)", or just the spend when there is no budget. */
export function spendOfBudget(spent: number, budget: number | null): string {
  if (budget === null || budget <= 0) return usd(spent);
  return `${usd(spent)} / ${usd(budget)} (${Math.round((spent / budget) * 100)}%)`;
}
