import type { CheckoutEnv } from "./checkoutEnv.js";
import { createDonorModel } from "./donorModel.js";
import { createErrorsModel } from "./errorsModel.js";
import { formApi } from "./formApi.js";
import { initialChoices } from "./initialChoices.js";
import { pageLanguage } from "./locale.js";
import { createOrderModel } from "./orderModel.js";
import { createPaymentModel } from "./paymentModel.js";
import { createQuoteModel } from "./quoteModel.js";
import { createSubmissionModel } from "./submissionModel.js";
import { createTextFields } from "./textFields.js";
import { createUpsellModel } from "./upsellModel.js";
import type { Boot, FormView } from "./view.js";

/**
 * The checkout's state, one model per concept: one signal per choice and per field, the order and checkout
 * bodies derived from them, and the calls of the public API (quote as choices change, debounced; checkout on
 * submit). Components only read signals and call the actions here.
 */
export function createCheckout(boot: Boot, env: CheckoutEnv = {}) {
  const view: FormView = boot.view;
  const post = formApi(env, view.formID);
  const start = initialChoices(view);
  const text = createTextFields(start.text);
  const errors = createErrorsModel();
  // The checkout holds the models' members, less those that only wire the models together (taken out here);
  // of the payment model, the components use the method alone.
  const {
    chosenAmount,
    problems: orderProblems,
    ...order
  } = createOrderModel(view, text, start, errors.clearError);
  const {
    problems: donorProblems,
    donorBody,
    answersBody,
    ...donor
  } = createDonorModel(view, text, start.answers);
  const quote = createQuoteModel(boot, env, post, order.orderKey, chosenAmount, errors.errors);
  const payment = createPaymentModel(view, text, quote.total);

  /** Every problem the donor can fix before sending, keyed by field id. */
  function validate(): Record<string, string> {
    return { ...orderProblems(), ...donorProblems(), ...payment.problems() };
  }

  /** The checkout request: the order, the donor, the payment, their answers and where they came from. */
  function checkoutBody(): Record<string, unknown> {
    const body: Record<string, unknown> = { ...(order.order.value ?? {}), donor: donorBody() };
    const paymentMethod = payment.paymentMethodBody();
    if (paymentMethod) body.paymentMethod = paymentMethod;
    Object.assign(body, answersBody());
    const utm = { ...(view.prefill?.utm ?? {}), ...(env.utm ?? {}) };
    if (Object.keys(utm).length) body.utm = utm;
    if (env.elementId) body.elementId = env.elementId;
    if (text.website.value) body.website = text.website.value;
    if (pageLanguage() !== "en") body.language = pageLanguage();
    return body;
  }

  const submission = createSubmissionModel(env, post, errors, payment, quote.total, validate, checkoutBody);
  const upsell = createUpsellModel(view, { ...order, chosenAmount }, text);

  /** Sends the checkout; a one-time gift that qualifies is first offered as a monthly one (once). */
  async function submit(): Promise<void> {
    if (Object.keys(validate()).length === 0 && upsell.interceptUpsell()) return;
    await submission.submit();
  }

  /** Declines the monthly offer and sends the one-time gift as chosen. */
  async function keepOneTime(): Promise<void> {
    upsell.declineUpsell();
    await submission.submit();
  }

  return {
    view,
    kind: view.formType,
    frequencies: start.frequencies,
    text,
    ...order,
    ...donor,
    method: payment.method,
    ...errors,
    ...submission,
    submit,
    upsell: upsell.upsell,
    acceptUpsell: upsell.acceptUpsell,
    keepOneTime,
    ...quote,
    validate,
    checkoutBody,
  };
}

export type Checkout = ReturnType<typeof createCheckout>;
