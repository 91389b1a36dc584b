import type { FormConfig } from "../schemas/form.js";
import { type Availability, left, sold } from "./availability.js";
import { isObject, isWholeCents } from "./inputChecks.js";
import { customRangeMessage, inCustomRange, MAX_TICKET_QUANTITY } from "./limits.js";
import type { ChosenTicket, OrderInput } from "./order.js";
import { ticketPromo } from "./promo.js";
import type { Fail, QuoteLine } from "./quote.js";
import { plural } from "./wording.js";

/**
 * The lines of an event (EVENT) order: tickets by name with quantities (see `OrderInput.tickets`), each
 * within `maxPerOrder` and the tickets left; an optional promo code on its applicable tickets; an optional
 * extra donation, 0 or within the custom range (named in the form's `currency`). Every error is reported
 * through `fail`.
 */
export function eventLines(
  form: FormConfig,
  input: OrderInput,
  availability: Availability,
  currency: string,
  fail: Fail,
): { lines: QuoteLine[]; discountCents: number; promoCode: string | null } {
  const lines: QuoteLine[] = [];
  const chosen: ChosenTicket[] = [];
  const tickets = input.tickets as unknown;
  // Every entry named a known ticket once with a valid quantity: the promo code can be judged against them.
  let ticketsParsed = false;

  if (tickets === undefined || tickets === null) {
    fail("tickets", "required", "tickets are required: choose at least one ticket");
  } else if (!Array.isArray(tickets)) {
    fail("tickets", "invalid", "tickets must be a list of {name, quantity}");
  } else {
    const seen = new Set<string>();
    let total = 0;
    let allQuantitiesValid = true;
    ticketsParsed = true;
    tickets.forEach((entry: unknown, i) => {
      const at = `tickets[${i}]`;
      if (!isObject(entry)) {
        fail(at, "invalid", `${at} must be an object {name, quantity}`);
        ticketsParsed = false;
        allQuantitiesValid = false;
        return;
      }
      const q = entry.quantity;
      const qOk = isWholeCents(q) && q >= 0 && q <= MAX_TICKET_QUANTITY;
      if (!qOk) {
        fail(
          `${at}.quantity`,
          "invalid",
          `${at}.quantity must be a whole number from 0 to ${MAX_TICKET_QUANTITY}`,
        );
        ticketsParsed = false;
        allQuantitiesValid = false;
      }
      // Counted whatever the name: an unknown ticket asked for is not "every quantity is 0".
      if (qOk) total += q as number;
      const name = entry.name;
      const ticket = typeof name === "string" ? form.tickets.find((t) => t.name === name) : undefined;
      if (!ticket) {
        fail(
          `${at}.name`,
          name === undefined || name === null ? "required" : "unknown",
          `${at}.name must be one of this event's tickets: ${form.tickets.map((t) => t.name).join(", ")}`,
        );
        ticketsParsed = false;
        return;
      }
      if (seen.has(ticket.name)) {
        fail(`${at}.name`, "invalid", `${at}.name lists "${ticket.name}" more than once`);
        ticketsParsed = false;
        return;
      }
      seen.add(ticket.name);
      if (!qOk) return;
      const quantity = q as number;
      if (quantity === 0) return;
      if (ticket.maxPerOrder !== null && ticket.maxPerOrder !== undefined && quantity > ticket.maxPerOrder) {
        fail(
          `${at}.quantity`,
          "limit_exceeded",
          `At most ${ticket.maxPerOrder} "${ticket.name}" ${plural(ticket.maxPerOrder, "ticket", "tickets")} per order`,
        );
      }
      const remaining = left(ticket.quantity, sold(availability.ticketsSold, ticket.name));
      if (remaining !== null && quantity > remaining) {
        fail(
          `${at}.quantity`,
          "sold_out",
          remaining === 0
            ? `"${ticket.name}" tickets are sold out`
            : `Only ${remaining} "${ticket.name}" ${plural(remaining, "ticket is", "tickets are")} left`,
        );
      }
      chosen.push({ ticket, quantity });
    });
    if (allQuantitiesValid && total === 0) {
      fail("tickets", "required", "choose at least one ticket (every quantity is 0)");
    }
  }

  for (const { ticket, quantity } of chosen)
    lines.push({
      kind: "ticket",
      label: ticket.name,
      unitCents: ticket.price,
      quantity,
      amountCents: ticket.price * quantity,
      admits: quantity * (ticket.groupSize ?? 1),
      ...(ticket.fairMarketValue != null && { fairMarketCents: ticket.fairMarketValue * quantity }),
    });

  const { discountCents, promoCode } = ticketPromo(
    form,
    input.promoCode,
    ticketsParsed ? chosen : [],
    availability,
    fail,
  );

  // extra donation
  const extra = input.extraDonation as unknown;
  if (extra !== undefined && extra !== null) {
    if (!isWholeCents(extra) || (extra !== 0 && !inCustomRange(extra)))
      fail(
        "extraDonation",
        "invalid",
        `extraDonation must be 0 or ${customRangeMessage(currency).replace(/^must be /, "")}`,
      );
    else if (extra > 0)
      lines.push({
        kind: "extra_donation",
        label: "Additional donation",
        unitCents: extra,
        quantity: 1,
        amountCents: extra,
      });
  }

  return { lines, discountCents, promoCode };
}
