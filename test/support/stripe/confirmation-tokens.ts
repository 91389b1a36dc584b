/**
 * ConfirmationTokens: what Stripe.js's createConfirmationToken makes in the browser (publishable key,
 * `POST /v1/confirmation_tokens`) and Stripe's server-side test helper (`POST /v1/test_helpers/confirmation_tokens`).
 * Card data goes to "Stripe" here; the merchant's server only ever sees the `ctoken_…` id.
 */

import { invalidRequest, missingParam } from "./errors.js";
import { newId } from "./ids.js";
import { shippingFrom } from "./objects.js";
import type { Params } from "./params.js";
import {
  createPaymentMethod,
  instrumentFromData,
  magicInstrument,
  methodDetails,
} from "./payment-methods.js";
import type { Op } from "./state.js";
import type { ConfirmationTokenObject, Internal, PaymentMethodObject, StoredRecord } from "./types.js";

export const CONFIRMATION_TOKEN_LIFETIME_SECONDS = 12 * 60 * 60;

export function createConfirmationToken(
  op: Op,
  p: Params,
  userAgent: string | null,
): ConfirmationTokenObject {
  const verification = p.obj("payment_method_options")?.obj("us_bank_account")?.str("verification_method");
  const pmId = p.str("payment_method");
  const data = p.obj("payment_method_data");
  let preview: ConfirmationTokenObject["payment_method_preview"];
  const internal: Internal = {};
  if (pmId) {
    const magic = magicInstrument(op, pmId);
    if (magic) {
      internal.instrument = magic.instrument;
      preview = {
        allow_redisplay: "unspecified",
        billing_details: magic.billing,
        customer: null,
        ...(methodDetails(op, magic.instrument) as { type: string }),
      };
    } else {
      const pm = op.find<PaymentMethodObject>("payment_method", pmId, "payment_method").obj;
      internal.paymentMethodId = pm.id;
      const {
        id: _id,
        object: _object,
        created: _created,
        livemode: _livemode,
        metadata: _metadata,
        ...rest
      } = pm;
      preview = rest;
    }
  } else if (data) {
    const { instrument, billing } = instrumentFromData(op, data, verification);
    internal.instrument = instrument;
    preview = {
      allow_redisplay: data.oneOf("allow_redisplay", ["always", "limited", "unspecified"]) ?? "unspecified",
      billing_details: billing,
      customer: null,
      ...(methodDetails(op, instrument) as { type: string }),
    };
  } else {
    throw missingParam("payment_method_data");
  }
  const created = op.now;
  const isBank = preview.type === "us_bank_account";
  const token: ConfirmationTokenObject = {
    id: newId("ctoken"),
    object: "confirmation_token",
    created,
    expires_at: created + CONFIRMATION_TOKEN_LIFETIME_SECONDS,
    livemode: op.livemode,
    mandate_data: isBank
      ? {
          customer_acceptance: {
            online: { ip_address: "127.0.0.1", user_agent: userAgent ?? "stripe-emulator" },
            type: "online",
          },
        }
      : null,
    metadata: {},
    payment_intent: null,
    payment_method_options: preview.type === "card" ? { card: { cvc_token: null } } : null,
    payment_method_preview: preview,
    return_url: p.strOrNull("return_url") ?? null,
    setup_future_usage: p.oneOf("setup_future_usage", ["on_session", "off_session"]) ?? null,
    setup_intent: null,
    shipping: shippingFrom(p.obj("shipping")),
    use_stripe_sdk: true,
  };
  op.put("confirmation_token", token, internal);
  return token;
}

/**
 * Uses a ConfirmationToken to confirm an intent: once, before `expires_at`. Answers the PaymentMethod it
 * stands for (a new one made from the token's details, or the saved one it was made from).
 */
export function useConfirmationToken(
  op: Op,
  id: string,
  intent: { paymentIntent?: string; setupIntent?: string },
): { token: ConfirmationTokenObject; paymentMethod: StoredRecord<PaymentMethodObject> } {
  const record = op.find<ConfirmationTokenObject>("confirmation_token", id, "confirmation_token");
  const token = record.obj;
  if (record.internal.used || token.payment_intent || token.setup_intent)
    throw invalidRequest(
      `ConfirmationToken ${id} has already been used to confirm a PaymentIntent or SetupIntent. Create a new ConfirmationToken.`,
      { param: "confirmation_token", code: "confirmation_token_already_used" },
    );
  if (op.now >= token.expires_at)
    throw invalidRequest(`ConfirmationToken ${id} has expired. Create a new ConfirmationToken.`, {
      param: "confirmation_token",
      code: "confirmation_token_expired",
    });
  let paymentMethod: StoredRecord<PaymentMethodObject>;
  if (record.internal.paymentMethodId) {
    paymentMethod = op.find<PaymentMethodObject>(
      "payment_method",
      record.internal.paymentMethodId,
      "payment_method",
    );
  } else {
    const preview = token.payment_method_preview;
    const instrument = record.internal.instrument;
    if (!instrument) throw new Error(`confirmation token ${id} has no instrument`);
    paymentMethod = createPaymentMethod(
      op,
      instrument,
      structuredClone(preview.billing_details) as PaymentMethodObject["billing_details"],
    );
  }
  op.modify(record);
  record.internal.used = true;
  token.payment_intent = intent.paymentIntent ?? null;
  token.setup_intent = intent.setupIntent ?? null;
  return { token, paymentMethod };
}
