import { signal } from "@preact/signals";
import type { CheckoutEnv } from "./checkoutEnv.js";
import { createDonorModel } from "./donorModel.js";
import { createErrorsModel } from "./errorsModel.js";
import { formApi } from "./formApi.js";
import { initialChoices } from "./initialChoices.js";
import { createOrderModel } from "./orderModel.js";
import { createQuoteModel } from "./quoteModel.js";
import { createTextFields } from "./textFields.js";
import type { Boot, FormView, Receipt } from "./view.js";

/**
 * The checkout's state, one model per concept: one signal per choice and per field, the order body derived
 * from them, and the quote, asked again (debounced) as choices change. Components read signals and call the
 * actions here. What runs only once the donor sends (checks, the checkout request, the answer's screens) is
 * in the modules of later.ts, which load after the page is up and take this state as their argument.
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

/** What sending keeps between one submit and the next (submissionModel.ts). */
export interface Sending {
  /** The idempotency key of the checkout being sent; kept while it may be sent again. */
  idempotencyKey: string | null;
  /** The body sent under that key, sent again as it was while its outcome is not known. */
  sentBody?: string;
  /** The processor's fields (stripe.js) once they are on the page; null: the app's own fields. */
  collector: PaymentCollector | null;
  /** Back from a decline, the processor's fields take the focus once they are on the page again. */
  focusCollector: boolean;
  /** The monthly offer was made (at most once per checkout). */
  upsellOffered: boolean;
}

export function createCheckout(boot: Boot, env: CheckoutEnv = {}) {
  const view: FormView = boot.view;
  const post = formApi(env, view.formID);
  const start = initialChoices(view);
  const text = createTextFields(start.text);
  const errors = createErrorsModel();
  const order = createOrderModel(view, text, start, errors.clearError);
  const quote = createQuoteModel(boot, env, post, order.orderKey, order.chosenAmount, errors.errors);
  const sending: Sending = {
    idempotencyKey: null,
    collector: null,
    focusCollector: false,
    upsellOffered: false,
  };

  return {
    view,
    kind: view.formType,
    frequencies: start.frequencies,
    env,
    post,
    text,
    ...order,
    ...createDonorModel(start.answers),
    /** How the donor pays in the app's own fields; forms of organizations on Stripe use Stripe's fields. */
    method: signal<"card" | "bank">("card"),
    ...errors,
    ...quote,
    status: signal<Status>("form"),
    /** False in the server's HTML until the app has taken it over: the button cannot submit a bare form. */
    ready: signal(false),
    receipt: signal<Receipt | null>(null),
    thanks: signal(""),
    declineMessage: signal(""),
    /**
     * "Make it monthly?": the offer is shown in place of the button, once, when a qualifying gift is sent;
     * its amounts are read from the order as it is (submissionModel.ts, monthlySuggestion).
     */
    upsell: signal(false),
    sending,
  };
}

export type Checkout = ReturnType<typeof createCheckout>;
