import { type Availability, productKey, promoKey, sold } from "../../../shared/pricing/availability.js";
import type { FormConfig } from "../../../shared/schemas/form.js";
import { ApiError } from "../../errors.js";

/**
 * What a form update may not do to what is already sold. Stock is counted by name (a ticket's `name`, a
 * sponsorship option's group and option titles, a promo code), and the ticket records keep the name they
 * were sold under: renaming or removing an item with sales would start its count again at 0 (overselling its
 * `quantity`) and part it from its tickets (the door's `ticketType=` filter). Seats held by checkouts in
 * progress count as sold. So an update is refused (409, nothing written) when it
 * - removes or renames a ticket type, a sponsorship option (or its group) or a promo code that has sales;
 * - lowers a `quantity` below what is sold of it (a quantity already below it may stay, or be raised).
 * A change that leaves these alone (prices, descriptions, order, a quantity at or above the sales) passes.
 */

/** The problems, each as `<field> <problem>`; empty when the update leaves the sales whole. */
export function salesConflicts(before: FormConfig, after: FormConfig, taken: Availability): string[] {
  const problems: string[] = [];
  const instead = (n: number) =>
    `its sales are counted by its name. Keep it, and add a new one instead; to stop selling it, set its quantity to ${n}`;

  const ticketsAfter = new Map(after.tickets.map((t, i) => [t.name, { t, i }]));
  for (const t of before.tickets) {
    const n = sold(taken.ticketsSold, t.name);
    if (n === 0) continue;
    const now = ticketsAfter.get(t.name);
    if (!now)
      problems.push(
        `tickets "${t.name}" has ${count(n, "ticket")} sold or held, so it cannot be renamed or removed: ${instead(n)}`,
      );
    else if (lowered(t.quantity, now.t.quantity, n))
      problems.push(
        `tickets[${now.i}].quantity must be at least ${n}, the tickets of "${t.name}" sold or held`,
      );
  }

  const optionsAfter = new Map<string, { quantity?: number | null | undefined; path: string }>();
  after.sponsorshipGroups.forEach((g, gi) => {
    g.options.forEach((o, oi) => {
      optionsAfter.set(productKey(g.groupTitle, o.optionTitle), {
        quantity: o.quantity,
        path: `sponsorshipGroups[${gi}].options[${oi}].quantity`,
      });
    });
  });
  for (const g of before.sponsorshipGroups)
    for (const o of g.options) {
      const n = sold(taken.productsSold, productKey(g.groupTitle, o.optionTitle));
      if (n === 0) continue;
      const now = optionsAfter.get(productKey(g.groupTitle, o.optionTitle));
      if (!now)
        problems.push(
          `sponsorshipGroups "${g.groupTitle}" option "${o.optionTitle}" has ${n} sold or held, so neither it nor its group can be renamed, and it cannot be removed: ${instead(n)}`,
        );
      else if (lowered(o.quantity, now.quantity, n))
        problems.push(`${now.path} must be at least ${n}, the "${o.optionTitle}" sold or held`);
    }

  const promosAfter = new Map(after.promoCodes.map((p, i) => [promoKey(p.code), { p, i }]));
  for (const p of before.promoCodes) {
    const n = sold(taken.promoRedemptions, promoKey(p.code));
    if (n === 0) continue;
    const now = promosAfter.get(promoKey(p.code));
    if (!now)
      problems.push(
        `promoCodes "${p.code}" has been redeemed ${count(n, "time")} (or is held by a checkout), so it cannot be renamed or removed: its redemptions are counted by its code. Keep it; to stop it, set its quantity to ${n}`,
      );
    else if (lowered(p.quantity, now.p.quantity, n))
      problems.push(
        `promoCodes[${now.i}].quantity must be at least ${n}, the times "${p.code}" was redeemed`,
      );
  }
  return problems;
}

/** A quantity made lower than it was, and lower than what is sold (null or absent: unlimited). */
function lowered(was: number | null | undefined, now: number | null | undefined, soldCount: number): boolean {
  if (now === null || now === undefined || now >= soldCount) return false;
  return was === null || was === undefined || now < was;
}

const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

/** The 409 of an update that would undo sales: `details` as a 400's, `error` saying it all in one line. */
export function salesConflict(problems: string[]): ApiError {
  return new ApiError(409, `This change would undo what is already sold: ${problems.join("; ")}`, problems);
}
