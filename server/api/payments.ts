import { z } from "zod";
import { centsToDollars } from "../../shared/money.js";
import { paymentSchema, refundRequestSchema } from "../../shared/schemas/payment.js";
import { ApiError } from "../errors.js";
import { refundPayment } from "../payments/refunds.js";
import type { Db } from "../store/database.js";
import type { PaymentFilters } from "../store/listFilters.js";
import { getOrganization } from "../store/organizations.js";
import { findPayment, listPayments, PAYMENT_ID } from "../store/payments.js";
import type { PaymentsTable } from "../store/schema.js";
import { presentPayment } from "../wire/payment.js";
import { csvDoc, wantsCsv } from "./csvExport.js";
import type { AppDeps } from "./env.js";
import { exportPayments } from "./exports.js";
import {
  filteredList,
  PAYMENT_FILTERS_DOC,
  PAYMENT_LIST_RULES,
  paymentFilters,
  paymentListQuery,
} from "./listFilters.js";
import { decodeCursor, encodeCursor, page, pageSchema } from "./pagination.js";
import { defineRoute, errorSchema, pathId, type RouteSpec, standardErrors } from "./route.js";

/** Payments: one record per charge, newest first; PROCESSING rows (a charge in flight) are never shown. */

export { PAYMENT_ID } from "../store/payments.js";

export const paymentIdParams = z.object({
  id: pathId("The payment's id (`pay_…`)"),
});
export const paymentNotFound = { description: "No such payment", schema: errorSchema };

/** The caller's settled payment (a charge still in flight is not a record yet), or 404 / 403. */
export async function loadOwnedPayment(db: Db, organizationId: string, id: string): Promise<PaymentsTable> {
  const row = PAYMENT_ID.test(id) ? await findPayment(db, id) : undefined;
  if (!row || row.status === "PROCESSING") throw new ApiError(404, "Payment not found");
  if (row.organization_id !== organizationId)
    throw new ApiError(403, "Payment belongs to another organization");
  return row;
}

/**
 * One page of the organization's payments that match `filters`, through the shared keyset cursor of list
 * `list` (a cursor pages only the filters it was handed out with).
 */
export async function paymentPage<Item>(
  db: Db,
  organizationId: string,
  list: "payments" | "donations",
  query: { limit: number; lastEvaluatedKey?: string },
  toItem: (row: PaymentsTable) => Item,
  filters: PaymentFilters = {},
) {
  const scope = filteredList(list, filters);
  const after = query.lastEvaluatedKey
    ? decodeCursor(scope, organizationId, query.lastEvaluatedKey)
    : undefined;
  const rows = await listPayments(db, organizationId, filters, query.limit + 1, after);
  return page(
    list,
    rows,
    query.limit,
    toItem,
    (r) => ({ sort: r.created_at, id: r.id }),
    (p) => encodeCursor(scope, organizationId, p),
  );
}

const refundAnswerSchema = z.object({
  message: z.string(),
  refund: z
    .object({
      id: z.string().meta({ description: "The processor's refund id" }),
      amount: z.number(),
      status: z.enum(["succeeded", "pending"]),
    })
    .nullable()
    .meta({
      description: "Null when a free order was cancelled: nothing was charged, so nothing was refunded",
    }),
  payment: paymentSchema,
});

export function paymentRoutes(deps: AppDeps): RouteSpec[] {
  const db = deps.store.db;
  const tags = ["Payments"];
  return [
    defineRoute({
      method: "get",
      path: "/v1/payments",
      operationId: "listPayments",
      permission: "donations:read",
      tags,
      summary: "List payments",
      description: `One record per charge (one-time gifts, event orders, each charge of a recurring gift), sorted by \`date\` descending. Payments recorded while you page through appear at the top of a fresh list, never in later pages: nothing is repeated or skipped. ${PAYMENT_FILTERS_DOC}`,
      query: paymentListQuery,
      rules: PAYMENT_LIST_RULES,
      responses: {
        200: {
          description: "A page of payments",
          schema: pageSchema("payments", paymentSchema),
          csv: csvDoc("payment"),
        },
        ...standardErrors,
      },
      handler: async (c, { query }) => {
        const organizationId = c.get("auth").organizationId;
        const filters = await paymentFilters(db, organizationId, query);
        if (wantsCsv(c)) return exportPayments(c, deps, organizationId, filters);
        return c.json(await paymentPage(db, organizationId, "payments", query, presentPayment, filters));
      },
    }),
    defineRoute({
      method: "get",
      path: "/v1/payments/{id}",
      operationId: "getPayment",
      permission: "donations:read",
      tags,
      summary: "Get a payment",
      params: paymentIdParams,
      responses: {
        200: { description: "The payment", schema: paymentSchema },
        ...standardErrors,
        404: paymentNotFound,
      },
      handler: async (c, { params }) =>
        c.json(presentPayment(await loadOwnedPayment(db, c.get("auth").organizationId, params.id))),
    }),
    defineRoute({
      method: "post",
      path: "/v1/payments/{id}/refund",
      operationId: "refundPayment",
      permission: "donations:write",
      tags,
      summary: "Refund a payment, in full or in part",
      description:
        'Refunds through the processor that made the payment. Without a body (or without `amount`) all that is left is refunded; `{ "amount": 15 }` refunds $15. A payment refunded in full is `REFUNDED` (its tickets and promo-code uses are given back); a partial refund raises `refundedAmount`. Fires `donation.updated`. Send an `Idempotency-Key` so that a retried request never refunds twice. Without one, identical requests made while the payment stands the same (the same amount, nothing refunded between them) make one refund: the answers that did not make it carry `Idempotent-Replayed: true` and say that no refund was made now. A free order (a registration that cost nothing) is cancelled the same way, without `amount`: it becomes `REFUNDED`, its tickets are voided and its places given back, and `refund` is null. 409 when the payment cannot be refunded (not completed, or already refunded in full).',
      params: paymentIdParams,
      body: refundRequestSchema,
      rules: [
        { fields: ["amount"], rule: "amount at most what is left of the payment to refund" },
        { fields: ["amount"], rule: "a whole amount when the payment's currency has no decimals (JPY)" },
      ],
      bodyOptional: true,
      responses: {
        200: { description: "Refunded (a bank refund may still be pending)", schema: refundAnswerSchema },
        ...standardErrors,
        404: paymentNotFound,
        409: { description: "Not refundable", schema: errorSchema },
      },
      handler: async (c, { params, body }) => {
        const { organizationId, actor } = c.get("auth");
        await loadOwnedPayment(db, organizationId, params.id);
        const org = await getOrganization(db, organizationId);
        if (!org) throw new ApiError(401, "Invalid API key");
        const idempotencyKey = c.req.header("Idempotency-Key");
        const done = await refundPayment(
          deps,
          org,
          params.id,
          {
            ...(body?.amount !== undefined && { amountCents: body.amount }),
            ...(body?.reason !== undefined && { reason: body.reason }),
            ...(idempotencyKey !== undefined && { idempotencyKey }),
          },
          actor,
        );
        return c.json(
          {
            message: !done.refund
              ? "Free order cancelled: its tickets are void and its places given back"
              : done.replayed
                ? `No refund was made now: an identical request (the same amount, while the payment stood the same) made refund ${done.refund.id} already. To make another refund, send it with an Idempotency-Key of its own.`
                : done.payment.status === "REFUNDED"
                  ? "Payment refunded in full"
                  : "Payment refunded in part",
            refund: done.refund && {
              id: done.refund.id,
              amount: centsToDollars(done.refund.amountCents),
              status: done.refund.status,
            },
            payment: presentPayment(done.payment),
          },
          200,
          // The answer of a request made before, as a replayed Idempotency-Key's is marked.
          done.replayed ? { "Idempotent-Replayed": "true" } : {},
        );
      },
    }),
  ];
}
