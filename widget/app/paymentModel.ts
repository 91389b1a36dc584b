import { type ReadonlySignal, signal } from "@preact/signals";
import { t as tr } from "./locale.js";
import { type TextFields, trimmedText } from "./textFields.js";
import type { FormView } from "./view.js";

/**
 * How the donor pays: card or bank, in the app's own fields, checked here and sent in the checkout. For
 * organizations on Stripe the processor's own fields collect the payment instead (see `PaymentCollector`).
 * Nothing is collected for a total of 0.
 */

/** MM/YY, MM / YY or MM/YYYY → month and four-digit year. */
export function parseExpiry(text: string): { month: number; year: number } | null {
  const m = /^(\d{1,2})\s*\/\s*(\d{2}|\d{4})$/.exec(text.trim());
  if (!m) return null;
  const month = Number(m[1]);
  const year = m[2].length === 2 ? 2000 + Number(m[2]) : Number(m[2]);
  return month >= 1 && month <= 12 ? { month, year } : null;
}

export function createPaymentModel(view: FormView, text: TextFields, total: ReadonlySignal<number | null>) {
  const method = signal<"card" | "bank">("card");
  /** The processor's fields on the page collect the payment, not the app's own. */
  const browserCollected = view.payment?.processor === "stripe";
  const t = trimmedText(text);

  /** What the donor must fix in the app's own payment fields before sending, keyed by field id. */
  function problems(): Record<string, string> {
    const e: Record<string, string> = {};
    if (total.value !== 0 && !browserCollected) {
      if (method.value === "card") {
        const digits = t("cardNumber").replace(/[\s-]/g, "");
        if (!/^\d{12,19}$/.test(digits)) e.cardNumber = tr("checkout.error.cardNumber");
        if (!parseExpiry(t("cardExp"))) e.cardExp = tr("checkout.error.cardExp");
        if (!/^\d{3,4}$/.test(t("cardCvc"))) e.cardCvc = tr("checkout.error.cardCvc");
      } else {
        if (!/^\d{9}$/.test(t("routingNumber").replace(/[\s-]/g, "")))
          e.routingNumber = tr("checkout.error.routingNumber");
        if (!/^\d{4,17}$/.test(t("accountNumber").replace(/[\s-]/g, "")))
          e.accountNumber = tr("checkout.error.accountNumber");
        if (!t("accountHolder")) e.accountHolder = tr("checkout.error.accountHolder");
      }
    }
    return e;
  }

  /** The checkout's `paymentMethod` from the app's own fields; undefined when they are not used. */
  function paymentMethodBody(): Record<string, unknown> | undefined {
    if (total.value === 0 || browserCollected) return undefined;
    if (method.value === "card") {
      const exp = parseExpiry(t("cardExp")) ?? { month: 0, year: 0 };
      return {
        type: "card",
        number: t("cardNumber"),
        expMonth: exp.month,
        expYear: exp.year,
        cvc: t("cardCvc"),
        ...(t("cardPostal") ? { postalCode: t("cardPostal") } : {}),
      };
    }
    return {
      type: "bank",
      routingNumber: t("routingNumber"),
      accountNumber: t("accountNumber"),
      accountHolder: t("accountHolder"),
    };
  }

  /** Back from a decline: the card fields are cleared so the donor enters another one. */
  function clearCard(): void {
    for (const k of ["cardNumber", "cardExp", "cardCvc", "routingNumber", "accountNumber"] as const)
      text[k].value = "";
  }

  return {
    method,
    browserCollected,
    problems,
    paymentMethodBody,
    clearCard,
  };
}

export type PaymentModel = ReturnType<typeof createPaymentModel>;
