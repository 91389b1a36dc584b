import { batch, computed, signal } from "@preact/signals";
import { decimalsOf } from "../../shared/currency.js";
import type { Frequency } from "../../shared/enums.js";
import { parseAmount } from "./amountText.js";
import type { InitialChoices } from "./initialChoices.js";
import { pageCurrency, pageLanguage } from "./locale.js";
import type { TextFields } from "./textFields.js";
import type { FormView } from "./view.js";

/**
 * The donor's order: what they chose (frequency, fund, amount or level, product, tickets, promo code, extra
 * donation, cover fees) and the order body the API prices. No totals are computed for charging: the server
 * prices. What the donor must fix before sending is checked in checkoutRequest.ts.
 */

/**
 * A typed amount in the page's language ("1.234,50" in German), in major units; null when it is none, or
 * one the page's currency cannot express (¥12.5: the field's check then names the range of whole amounts,
 * and nothing is sent to be priced).
 */
export function typedAmount(text: string): number | null {
  const amount = parseAmount(text, pageLanguage());
  return amount !== null && (amount % 1 === 0 || decimalsOf(pageCurrency())) ? amount : null;
}

export function createOrderModel(
  view: FormView,
  text: TextFields,
  start: InitialChoices,
  clearError: (field: string) => void,
) {
  const kind = view.formType;
  const frequency = signal<Frequency>(start.frequency);
  const fund = signal(start.fund);
  const presets = computed(() => view.amounts[frequency.value] ?? []);
  const amount = signal<number | null>(start.amount);
  const level = signal<string | null>(start.level);
  const useCustom = signal(start.useCustom);
  const product = signal<{ group: string; name: string } | null>(start.product);
  const tickets = signal<Record<string, number>>(start.tickets);
  const appliedPromo = signal("");
  const coverFees = signal(false);

  /** The order as the API takes it, or null while it is incomplete (nothing to price yet). */
  const order = computed<Record<string, unknown> | null>(() => {
    const base: Record<string, unknown> = { frequency: frequency.value, fund: fund.value };
    if (coverFees.value) base.coverFees = true;
    if (kind === "EMBED_FORM" || kind === "CROWDFUNDING_FORM") {
      if (useCustom.value) {
        const dollars = typedAmount(text.customAmount.value);
        if (dollars === null || dollars <= 0) return null;
        return { ...base, amount: dollars };
      }
      if (kind === "CROWDFUNDING_FORM") return level.value ? { ...base, givingLevel: level.value } : null;
      return amount.value === null ? null : { ...base, amount: amount.value };
    }
    if (kind === "PRODUCT") return product.value ? { ...base, product: product.value } : null;
    const chosen = Object.entries(tickets.value)
      .filter(([, q]) => q > 0)
      .map(([name, quantity]) => ({ name, quantity }));
    if (chosen.length === 0) return null;
    const out: Record<string, unknown> = { ...base, tickets: chosen };
    if (appliedPromo.value) out.promoCode = appliedPromo.value;
    const extra = typedAmount(text.extraDonation.value);
    if (extra) out.extraDonation = extra;
    return out;
  });
  const orderKey = computed(() => (order.value ? JSON.stringify(order.value) : null));

  /** The gift or price chosen, before fees and discounts: what the button names until the quote arrives. */
  const chosenAmount = computed<number | null>(() => {
    const o = order.value;
    if (!o) return null;
    if (typeof o.amount === "number") return o.amount;
    if (kind === "CROWDFUNDING_FORM")
      return view.givingLevels.find((l) => l.title === level.value)?.amount ?? null;
    if (kind === "PRODUCT") {
      const g = view.productGroups.find((x) => x.productGroupName === product.value?.group);
      return g?.products.find((x) => x.productName === product.value?.name)?.price ?? null;
    }
    const sum = view.tickets.reduce((s, t) => s + t.price * (tickets.value[t.name] ?? 0), 0);
    return sum + (typedAmount(text.extraDonation.value) ?? 0);
  });

  function setFrequency(f: Frequency): void {
    batch(() => {
      frequency.value = f;
      // The presets differ per frequency: keep the amount only when it is one of the new presets.
      if (
        kind === "EMBED_FORM" &&
        !useCustom.value &&
        amount.value !== null &&
        !presets.value.includes(amount.value)
      )
        amount.value = presets.value[1] ?? presets.value[0] ?? null;
    });
  }

  function setTicket(name: string, quantity: number): void {
    tickets.value = { ...tickets.value, [name]: quantity };
  }

  function applyPromo(): void {
    appliedPromo.value = text.promoCode.value.trim();
    clearError("promoCode");
  }

  return {
    frequency,
    fund,
    presets,
    amount,
    level,
    useCustom,
    product,
    tickets,
    appliedPromo,
    coverFees,
    order,
    orderKey,
    chosenAmount,
    setFrequency,
    setTicket,
    applyPromo,
  };
}

export type OrderModel = ReturnType<typeof createOrderModel>;
