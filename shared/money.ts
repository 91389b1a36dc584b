/** Money is integer cents inside; dollars (at most two decimals) only at the JSON edge. */

export const MAX_AMOUNT_CENTS = 100_000_000;

/** Cents for a dollar amount, or null when it has more than two decimals or is not finite. */
export function dollarsToCents(dollars: number): number | null {
  if (!Number.isFinite(dollars)) return null;
  const cents = Math.round(dollars * 100);
  if (Math.abs(cents - dollars * 100) > 1e-6) return null;
  return cents;
}

export function centsToDollars(cents: number): number {
  return cents / 100;
}

/** Built once: `toLocaleString` would build a formatter on every call. */
const WHOLE_DOLLARS = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

export function formatDollars(cents: number): string {
  const whole = WHOLE_DOLLARS.format(Math.trunc(cents / 100));
  const rest = Math.abs(cents % 100);
  return rest === 0 ? `$${whole}` : `$${whole}.${String(rest).padStart(2, "0")}`;
}
