import type { StripeElementLocale } from "@stripe/stripe-js";
import { loadStripe } from "@stripe/stripe-js/pure";

/**
 * The hosted update page of a gift whose method is at Stripe (server/pages/updateWithStripe.ts): the
 * Payment Element in setup mode saves a new method, and a recurring charge the bank held is confirmed with
 * the donor present. The server does the saving and the charging; this page sends it a ConfirmationToken
 * and runs the bank's challenge (`handleNextAction`) when the server asks for it.
 */

interface UpdateBoot {
  publishableKey: string;
  jsUrl?: string;
  actionUrl: string;
  held: { amount: string } | null;
  /** The gift's currency, lower case (`usd`), and the Stripe method types its link takes. */
  currency: string;
  methodTypes: string[];
  /** What this page words itself, in the page's language (the server words its answers). */
  text: UpdateText;
}

export interface UpdateText {
  /** Stripe's fields could not be loaded. */
  fieldsFailed: string;
  /** The details entered could not be used, and Stripe said no more. */
  details: string;
  /** The server could not be reached, or did not answer as it does. */
  network: string;
  /** The bank's challenge was not completed, and Stripe said no more. */
  notConfirmed: string;
}

interface ActionAnswer {
  status: "saved" | "paid" | "requires_action" | "error";
  message?: string;
  error?: string;
  clientSecret?: string;
  setupIntent?: string;
}

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

/** The server's answer; a network failure or an answer that is not the server's JSON is an error. */
async function post(url: string, body: Record<string, unknown>, text: UpdateText): Promise<ActionAnswer> {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    const answer = (await res.json()) as ActionAnswer;
    if (answer && typeof answer.status === "string") return answer;
  } catch {
    // said below
  }
  return { status: "error", error: text.network };
}

function show(el: HTMLElement | null, text: string): void {
  if (!el) return;
  el.textContent = text;
  el.hidden = false;
}

export async function mountUpdatePage(bootElement: HTMLElement): Promise<void> {
  const boot = JSON.parse(bootElement.textContent ?? "{}") as UpdateBoot;
  const form = document.getElementById("almoner-update-form") as HTMLFormElement | null;
  const fields = document.getElementById("almoner-update-fields");
  const error = document.getElementById("almoner-update-error");
  const done = document.getElementById("almoner-update-done");
  /** The link's way on (its returnUrl), shown once the method is saved or the payment made. */
  const onward = document.getElementById("almoner-update-continue");
  if (!form || !fields) return;
  const { text } = boot;
  const stripe = await (boot.jsUrl ? loadScript(boot.jsUrl) : Promise.resolve())
    .then(() => loadStripe(boot.publishableKey))
    .catch(() => null);
  if (!stripe) {
    // Without Stripe's fields nothing can be saved here: the form says so instead of sending itself.
    form.addEventListener("submit", (event) => event.preventDefault());
    show(error, text.fieldsFailed);
    return;
  }
  const elements = stripe.elements({
    mode: "setup",
    currency: boot.currency,
    allowedPaymentMethodTypes: boot.methodTypes,
    setupFutureUsage: "off_session",
    // Stripe's own fields speak the page's language.
    locale: (document.documentElement.lang || "auto") as StripeElementLocale,
  });
  const payment = elements.create("payment", {
    layout: "tabs",
    wallets: { applePay: "never", googlePay: "never" },
  });
  payment.mount(fields);

  /** Runs the bank's challenge the server asked for, then tells the server it is done. */
  async function settle(answer: ActionAnswer, completed: Record<string, unknown>): Promise<ActionAnswer> {
    if (answer.status !== "requires_action" || !answer.clientSecret) return answer;
    const result = await stripe?.handleNextAction({ clientSecret: answer.clientSecret });
    if (result?.error) return { status: "error", error: result.error.message || text.notConfirmed };
    return post(
      boot.actionUrl,
      { ...completed, ...(answer.setupIntent ? { setupIntent: answer.setupIntent } : {}) },
      text,
    );
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (error) error.hidden = true;
    const submitted = await elements.submit();
    if (submitted.error) return show(error, submitted.error.message || text.details);
    const made = await stripe.createConfirmationToken({ elements });
    if (made.error || !made.confirmationToken) return show(error, made.error?.message || text.details);
    const answer = await settle(
      await post(boot.actionUrl, { action: "save", confirmationToken: made.confirmationToken.id }, text),
      {
        action: "setup-completed",
      },
    );
    if (answer.status === "saved") {
      form.hidden = true;
      show(done, answer.message ?? "");
      if (onward) onward.hidden = false;
    } else show(error, answer.error ?? text.network);
  });

  const confirm = document.getElementById("almoner-confirm-payment") as HTMLButtonElement | null;
  const status = document.getElementById("almoner-confirm-status");
  confirm?.addEventListener("click", async () => {
    confirm.disabled = true;
    const answer = await settle(await post(boot.actionUrl, { action: "confirm-payment" }, text), {
      action: "payment-completed",
    });
    if (answer.status === "paid") {
      confirm.hidden = true;
      show(status, answer.message ?? "");
      if (onward) onward.hidden = false;
    } else {
      confirm.disabled = false;
      show(status, answer.error ?? text.notConfirmed);
    }
  });
}
