import { batch, type ReadonlySignal, signal } from "@preact/signals";
import type { CheckoutEnv } from "./checkoutEnv.js";
import { type ErrorsModel, fieldErrors } from "./errorsModel.js";
import type { PostToForm } from "./formApi.js";
import { t as tr } from "./locale.js";
import type { PaymentModel } from "./paymentModel.js";
import type { Receipt } from "./view.js";

/**
 * Sending the checkout: every problem the donor can fix is found first; the processor's fields, when on the
 * page, make the payment token; the donor's bank may ask them to confirm; the answer is a receipt, a decline,
 * or errors shown at the fields they name. Sent again after no answer, a conflict or a server error, the
 * checkout keeps its idempotency key, so it cannot charge twice; any other answer ends the attempt.
 */

export type Status = "form" | "submitting" | "success" | "declined";

/**
 * A processor's own fields on the page (Stripe's Payment Element, in the module stripe.js loads) collect
 * the card or bank account and give the checkout a token; card data never passes through this app.
 */
export interface PaymentCollector {
  /** Checks the processor's fields and makes the token the checkout sends, or says what to fix. */
  collect(): Promise<{ token: string } | { error: string }>;
  /** The donor confirms the payment with their bank (3-D Secure); an error when they could not. */
  confirm(clientSecret: string): Promise<{ error?: string }>;
  /** Puts the focus in the processor's fields, as soon as they can take it. */
  focus(): void;
}

function newKey(): string {
  const c = globalThis.crypto;
  return c?.randomUUID ? c.randomUUID() : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

export function createSubmissionModel(
  env: CheckoutEnv,
  post: PostToForm,
  { errors, formError }: ErrorsModel,
  payment: PaymentModel,
  total: ReadonlySignal<number | null>,
  /** Every problem the donor can fix before sending, keyed by field id. */
  validate: () => Record<string, string>,
  /** The checkout request's body. */
  checkoutBody: () => Record<string, unknown>,
) {
  const status = signal<Status>("form");
  /** False in the server's HTML until the app has taken it over: the button cannot submit a bare form. */
  const ready = signal(false);
  const receipt = signal<Receipt | null>(null);
  const thanks = signal("");
  const declineMessage = signal("");
  let idempotencyKey = newKey();
  /** The processor's fields (stripe.js) once they are on the page; null: the app's own fields. */
  let collector: PaymentCollector | null = null;
  /** Back from a decline, the processor's fields take the focus once they are on the page again. */
  let focusCollector = false;

  /** The processor's fields say they are ready (or gone, with null). */
  function setCollector(next: PaymentCollector | null): void {
    collector = next;
    if (next && focusCollector) {
      focusCollector = false;
      next.focus();
    }
  }

  async function submit(): Promise<void> {
    if (status.value === "submitting") return;
    const found = validate();
    errors.value = found;
    formError.value = null;
    if (Object.keys(found).length) {
      const n = Object.keys(found).length;
      formError.value = tr("checkout.error.fix", { count: n });
      return;
    }
    status.value = "submitting";
    const payload = checkoutBody();
    if (payment.browserCollected && total.value !== 0) {
      const collected = collector ? await collector.collect() : { error: tr("checkout.error.fieldsLoading") };
      if ("error" in collected) {
        batch(() => {
          status.value = "form";
          errors.value = { ...errors.value, payment: collected.error };
          formError.value = collected.error;
        });
        return;
      }
      payload.paymentMethod = { type: "token", token: collected.token };
    }
    let answer: { res: Response; body: Record<string, unknown> };
    try {
      answer = await post("/checkout", JSON.stringify(payload), idempotencyKey);
      // The donor's bank asks them to confirm (3-D Secure): then the server records what came of it.
      if (answer.res.status === 202 && typeof answer.body.clientSecret === "string") {
        const confirmed = collector ? await collector.confirm(answer.body.clientSecret) : { error: "" };
        answer = await post(`/checkout/${encodeURIComponent(String(answer.body.paymentID))}/complete`, "{}");
        // Stripe.js words a failed confirmation for the donor; the server's record has the API's wording.
        if (confirmed.error && (answer.res.status === 202 || answer.res.status === 402))
          answer = { res: new Response(null, { status: 402 }), body: { error: confirmed.error } };
      }
    } catch {
      batch(() => {
        status.value = "form";
        formError.value = tr("checkout.error.network");
      });
      return;
    }
    const { res, body } = answer;
    // A definitive answer ends this attempt; the next one is a new checkout.
    if (res.status !== 409 && res.status < 500) idempotencyKey = newKey();
    batch(() => {
      if (res.status === 201) {
        receipt.value = body.payment as Receipt;
        thanks.value = String(body.message ?? tr("checkout.thanks"));
        status.value = "success";
      } else if (res.status === 402) {
        declineMessage.value = String(body.error ?? tr("checkout.error.declined"));
        status.value = "declined";
      } else {
        status.value = "form";
        const details = (body.details as string[] | undefined) ?? [];
        errors.value = fieldErrors(details);
        formError.value = [String(body.error ?? tr("checkout.error.generic")), ...details].join(" ");
      }
    });
    if (res.status === 201 && receipt.value) env.onComplete?.(receipt.value);
  }

  /** Back from a decline: the card fields are cleared so the donor enters another one. */
  function retry(): void {
    batch(() => {
      payment.clearCard();
      status.value = "form";
      formError.value = `${declineMessage.value} Nothing was charged.`;
    });
    focusCollector = payment.browserCollected;
  }

  return { status, ready, receipt, thanks, declineMessage, submit, retry, setCollector };
}
