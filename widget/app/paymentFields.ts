import { effect } from "@preact/signals";
import { toMinorUnits } from "../../shared/currency.js";
import { validate } from "./checkoutRequest.js";
import { t as tr } from "./locale.js";
import type { Checkout, PaymentCollector } from "./store.js";
import { setCollector, submit } from "./submissionModel.js";

/**
 * Where a processor's own fields go (Stripe's Payment Element and wallet buttons): the module that drives
 * them is loaded only for forms of organizations on Stripe, after the page is up (stripe.js, built on its
 * own), and talks to the checkout only through the `PaymentHost` below. Nothing of Stripe is in app.js;
 * this bridge is in the checkout's second chunk (later.ts), which such forms load at once.
 */

export interface PaymentHost {
  publishableKey: string;
  /** Where Stripe.js comes from when not from Stripe (a stand-in in tests). */
  jsUrl?: string;
  containers: { express: HTMLElement; payment: HTMLElement };
  /** The form's currency, as Stripe writes it (lower case ISO 4217: `usd`, `eur`, `jpy`). */
  currency: string;
  /**
   * What to charge, in the currency's minor units (cents; whole yen), and whether the method is saved for
   * later charges; null: nothing chosen yet.
   */
  order(): { amount: number; recurring: boolean } | null;
  /** Calls `listener` whenever `order()` may have changed; returns a function that stops it. */
  onOrderChange(listener: () => void): () => void;
  donor(): { name: string; email: string };
  /** The processor's fields are ready to collect the payment (or gone, with null). */
  setCollector(collector: PaymentCollector | null): void;
  /** A wallet button was pressed: checks the rest of the form; false (with the problems shown) if not ready. */
  ready(): boolean;
  /** Sends the checkout; true when the gift went through. */
  submit(): Promise<boolean>;
  setError(message: string | null): void;
}

export interface PaymentModule {
  mountStripe(host: PaymentHost): () => void;
}

/** Loads the payment module and mounts the processor's fields; the returned function takes them away. */
export function attachPaymentFields(c: Checkout, containers: PaymentHost["containers"]): () => void {
  const payment = c.view.payment;
  if (payment?.processor !== "stripe") return () => {};
  let detach: (() => void) | undefined;
  let gone = false;
  const host: PaymentHost = {
    publishableKey: payment.publishableKey,
    ...(payment.jsUrl ? { jsUrl: payment.jsUrl } : {}),
    containers,
    currency: c.view.currency.toLowerCase(),
    order() {
      const total = c.total.value;
      if (!c.order.value || total === null || total <= 0) return null;
      return {
        amount: toMinorUnits(Math.round(total * 100), c.view.currency),
        recurring: c.frequency.value !== "ONE_TIME",
      };
    },
    onOrderChange(listener) {
      return effect(() => {
        void c.total.value;
        void c.frequency.value;
        listener();
      });
    },
    donor() {
      const t = c.text;
      return {
        name: `${t.firstName.value.trim()} ${t.lastName.value.trim()}`.trim(),
        email: t.email.value.trim(),
      };
    },
    setCollector: (next) => setCollector(c, next),
    ready() {
      const found = validate(c);
      c.errors.value = found;
      const n = Object.keys(found).length;
      c.formError.value = n ? tr("checkout.error.fixFirst", { count: n }) : null;
      return n === 0;
    },
    async submit() {
      await submit(c);
      return c.status.value === "success";
    },
    setError(message) {
      const { payment: _, ...rest } = c.errors.value;
      c.errors.value = message ? { ...rest, payment: message } : rest;
    },
  };
  import(/* @vite-ignore */ payment.module)
    .then((m: PaymentModule) => {
      if (!gone) detach = m.mountStripe(host);
    })
    .catch(() => host.setError(tr("checkout.error.fieldsFailed")));
  return () => {
    gone = true;
    detach?.();
    setCollector(c, null);
  };
}
