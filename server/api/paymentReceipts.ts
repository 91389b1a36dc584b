import { z } from "zod";
import { ApiError } from "../errors.js";
import { ReceiptResendError, resendReceipt } from "../payments/receipts.js";
import type { AppDeps } from "./env.js";
import { loadOwnedPayment, paymentIdParams, paymentNotFound } from "./payments.js";
import { defineRoute, errorSchema, type RouteSpec, standardErrors } from "./route.js";

/** A payment's receipt sent again on request (the dashboard's "Send the receipt again"). */

const resentSchema = z.object({
  message: z.string(),
  emailId: z.string().meta({ description: "The queued e-mail's id (`eml_…`)" }),
  to: z.string().meta({ description: "The donor's address it goes to" }),
});

export function paymentReceiptRoutes(deps: AppDeps): RouteSpec[] {
  return [
    defineRoute({
      method: "post",
      path: "/v1/payments/{id}/receipt",
      operationId: "resendReceipt",
      permission: "donations:write",
      tags: ["Payments"],
      summary: "Send a payment's receipt again",
      description:
        "Queues the payment's receipt again, in the donor's language, to the address the donor gave; the mail worker sends it within moments. For completed payments and bank payments still settling; not for a payment waiting for the donor's confirmation (a card charge held for authentication, a bank account to verify). Sent again at most once a minute: a second request within the minute answers 429.",
      params: paymentIdParams,
      responses: {
        202: { description: "Queued", schema: resentSchema },
        ...standardErrors,
        404: paymentNotFound,
        409: {
          description:
            "The payment has no receipt (failed, refunded in full, or waiting for the donor's confirmation)",
          schema: errorSchema,
        },
        429: { description: "Sent less than a minute ago", schema: errorSchema },
      },
      handler: async (c, { params }) => {
        const row = await loadOwnedPayment(deps.store.db, c.get("auth").organizationId, params.id);
        const sent = await resendReceipt(deps.store.db, row, {
          nowMs: deps.now(),
          publicUrl: deps.config.publicUrl,
        }).catch((error: unknown) => {
          if (!(error instanceof ReceiptResendError)) throw error;
          if (error.kind === "too-soon") throw ApiError.tooMany(error.message, 60);
          throw new ApiError(409, error.message);
        });
        return c.json(
          { message: `The receipt is queued for ${row.email}`, emailId: sent.emailId, to: row.email },
          202,
        );
      },
    }),
  ];
}
