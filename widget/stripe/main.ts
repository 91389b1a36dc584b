import type {
  Stripe,
  StripeElementLocale,
  StripeElements,
  StripeExpressCheckoutElement,
  StripeExpressCheckoutElementReadyEvent,
  StripePaymentElement,
} from "@stripe/stripe-js";
import { loadStripe } from "@stripe/stripe-js/pure";
import type { PaymentHost } from "../app/paymentFields.js";
import { mountUpdatePage } from "./updatePage.js";

/**
 * Stripe's fields in the checkout (dist/widget/stripe.js, loaded only for forms of organizations on
 * Stripe, after the page is up). Stripe.js comes from Stripe (or, in tests, a stand-in named by the page);
 * the Payment Element (card, US bank account, Link) is created in deferred mode from the order's total and
 * follows it as it changes; above it the Express Checkout Element offers Apple Pay and Google Pay where
 * the browser has them, and the Payment Element's own wallet buttons are hidden. Inside an iframe only
 * methods that need no redirect are offered. The checkout gets a ConfirmationToken, never card data.
 */

/** Methods that finish on the page itself (an iframe cannot follow a redirect). */
const NO_REDIRECT_METHODS = ["card", "us_bank_account", "link"];

function framed(): boolean {
  try {
    return window.self !== window.top;
  } catch {
    return true;
  }
}

/** A script tag for a Stripe.js that is not at Stripe's address (tests): `loadStripe` then finds `window.Stripe`. */
function loadScript(src: string): Promise<void> {
  if ((window as { Stripe?: unknown }).Stripe) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = src;
    script.onload = () => resolve();
    script.onerror = () => reject(new Error("Stripe.js could not be loaded"));
    document.head.appendChild(script);
  });
}

/** The checkout's messages this module words itself (Stripe words the rest, in the page's language). */
type TextKey =
  | "checkout.error.fieldsLoading"
  | "checkout.error.fieldsFailed"
  | "checkout.error.notAccepted"
  | "checkout.error.notConfirmed";

let pageMessages: Record<string, unknown> | undefined;

/**
 * A message in the page's language, from the catalog the page was sent with (`#almoner-boot`): none of
 * these has a placeholder, so each is a plain string there. The key itself if the page lacks it.
 */
function text(key: TextKey): string {
  if (!pageMessages) {
    try {
      const boot = JSON.parse(document.getElementById("almoner-boot")?.textContent ?? "{}");
      pageMessages = boot?.messages ?? {};
    } catch {
      pageMessages = {};
    }
  }
  const found = pageMessages?.[key];
  return typeof found === "string" ? found : key;
}

function message(error: { message?: string } | undefined, fallback: TextKey): string {
  return error?.message || text(fallback);
}

export function mountStripe(host: PaymentHost): () => void {
  let stopped = false;
  let stripe: Stripe | null = null;
  let elements: StripeElements | null = null;
  let payment: StripePaymentElement | null = null;
  let express: StripeExpressCheckoutElement | null = null;
  let stopWatching: (() => void) | undefined;

  const options = () => {
    const order = host.order();
    return {
      // Until an amount is chosen, a placeholder the currency can take (Stripe needs one).
      amount: order?.amount ?? 100,
      setupFutureUsage: order?.recurring ? ("off_session" as const) : null,
    };
  };

  async function start(): Promise<void> {
    if (host.jsUrl) await loadScript(host.jsUrl);
    stripe = await loadStripe(host.publishableKey);
    if (!stripe || stopped) return;
    const { amount, setupFutureUsage } = options();
    elements = stripe.elements({
      mode: "payment",
      amount,
      currency: host.currency,
      ...(setupFutureUsage ? { setupFutureUsage } : {}),
      ...(framed() ? { allowedPaymentMethodTypes: NO_REDIRECT_METHODS } : {}),
      appearance: { theme: "stripe" },
      // Stripe's own fields speak the page's language.
      locale: (document.documentElement.lang || "auto") as StripeElementLocale,
    });
    payment = elements.create("payment", {
      layout: "tabs",
      wallets: { applePay: "never", googlePay: "never" },
    });
    payment.mount(host.containers.payment);
    payment.on("change", () => host.setError(null));
    let paymentReady = false;
    let focusWhenReady = false;
    payment.on("ready", () => {
      paymentReady = true;
      if (focusWhenReady) payment?.focus();
    });

    express = elements.create("expressCheckout", { buttonType: { applePay: "donate", googlePay: "donate" } });
    express.mount(host.containers.express);
    express.on("ready", (event: StripeExpressCheckoutElementReadyEvent) => {
      // No wallet in this browser: the space goes back to the form.
      if (!event.availablePaymentMethods) host.containers.express.hidden = true;
    });
    // The wallet's sheet opens only once the rest of the form is complete; otherwise the form says what is missing.
    express.on("click", (event) => {
      if (host.ready()) event.resolve({ emailRequired: false });
      else event.reject();
    });
    // The wallet's sheet is told when the gift did not go through, so the donor can pay another way.
    express.on("confirm", async (event) => {
      if (!(await host.submit())) event.paymentFailed({ reason: "fail" });
    });

    // The fields follow the order: amount, and whether the method is kept for later charges.
    stopWatching = host.onOrderChange(() => {
      const next = options();
      elements?.update({ amount: next.amount, setupFutureUsage: next.setupFutureUsage });
    });

    host.setCollector({
      async collect() {
        if (!stripe || !elements) return { error: text("checkout.error.fieldsLoading") };
        const submitted = await elements.submit();
        if (submitted.error) return { error: message(submitted.error, "checkout.error.notAccepted") };
        const donor = host.donor();
        const made = await stripe.createConfirmationToken({
          elements,
          params: { payment_method_data: { billing_details: { name: donor.name, email: donor.email } } },
        });
        if (made.error || !made.confirmationToken)
          return { error: message(made.error, "checkout.error.notAccepted") };
        return { token: made.confirmationToken.id };
      },
      async confirm(clientSecret) {
        if (!stripe) return { error: text("checkout.error.fieldsLoading") };
        const result = await stripe.handleNextAction({ clientSecret });
        return result.error ? { error: message(result.error, "checkout.error.notConfirmed") } : {};
      },
      focus() {
        if (paymentReady) payment?.focus();
        else focusWhenReady = true;
      },
    });
  }

  start().catch(() => host.setError(text("checkout.error.fieldsFailed")));
  return () => {
    stopped = true;
    stopWatching?.();
    host.setCollector(null);
    payment?.destroy();
    express?.destroy();
  };
}

// The hosted update page of a gift at Stripe loads this module by itself (updatePage.ts).
const updateBoot = typeof document === "undefined" ? null : document.getElementById("almoner-update-boot");
if (updateBoot) void mountUpdatePage(updateBoot);
