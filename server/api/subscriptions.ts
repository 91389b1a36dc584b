import { z } from "zod";
import { isExpressible } from "../../shared/currency.js";
import type { Frequency } from "../../shared/enums.js";
import { NO_SALES } from "../../shared/pricing/availability.js";
import { DEFAULT_FEE_RATE } from "../../shared/pricing/fees.js";
import { priceOrder } from "../../shared/pricing/priceOrder.js";
import { RECURRING_FREQUENCIES } from "../../shared/schemas/portal.js";
import {
  subscriptionSchema,
  subscriptionUpdateSchema,
  updateLinkBodySchema,
  updateLinkResponseSchema,
} from "../../shared/schemas/subscription.js";
import { wireTime } from "../../shared/time.js";
import { renewalFeeCents } from "../billing/charges.js";
import type { RecurringFrequency } from "../billing/schedule.js";
import {
  changeSubscription,
  type SubscriptionChange,
  SubscriptionChangeRefused,
} from "../billing/subscriptionChanges.js";
import { ApiError } from "../errors.js";
import { createUpdateLink, UPDATE_PAGE_PATH } from "../payments/updateLink.js";
import { chargeLimitRefusal, type PaymentProcessor, ProcessorError } from "../processors/port.js";
import type { AuditActor } from "../store/auditLog.js";
import type { Db } from "../store/database.js";
import { findFormCached } from "../store/forms.js";
import { getOrganization } from "../store/organizations.js";
import type { SubscriptionsTable } from "../store/schema.js";
import { findSubscription, listSubscriptions } from "../store/subscriptions.js";
import { presentSubscription } from "../wire/subscription.js";
import { csvDoc, wantsCsv } from "./csvExport.js";
import type { AppDeps } from "./env.js";
import { exportSubscriptions } from "./exports.js";
import { filteredList, subscriptionFilters, subscriptionListQuery } from "./listFilters.js";
import { decodeCursor, encodeCursor, page, pageSchema } from "./pagination.js";
import { defineRoute, errorSchema, pathId, type RouteSpec, standardErrors } from "./route.js";

/** Subscriptions: read, cancel, change the amount, send an update link. */

const SUBSCRIPTION_ID = /^sub_[0-9a-z]{26}$/;

const idParams = z.object({ id: pathId("The subscription's id (`sub_…`)") });
const notFound = { description: "No such subscription", schema: errorSchema };

async function loadOwnedSubscription(
  db: Db,
  organizationId: string,
  id: string,
): Promise<SubscriptionsTable> {
  const row = SUBSCRIPTION_ID.test(id) ? await findSubscription(db, id) : undefined;
  if (!row) throw new ApiError(404, "Subscription not found");
  if (row.organization_id !== organizationId)
    throw new ApiError(403, "Subscription belongs to another organization");
  return row;
}

const cancelled = () => new ApiError(409, "Subscription is cancelled");

/**
 * What the checkout would refuse of the gift the change leaves (its frequency and amount, new or kept) on
 * the form it came from: the frequencies the form offers, its amounts when it takes no custom amount, the
 * custom range, and the currency's decimals. None when the change touches neither, or when the form is
 * gone or deleted (then only the general rules apply).
 */
async function formRefusals(
  deps: AppDeps,
  sub: SubscriptionsTable,
  change: SubscriptionChange,
): Promise<string[]> {
  if (change.amountCents === undefined && change.frequency === undefined) return [];
  return refusalsOn(await findFormCached(deps.store, sub.form_id), sub, change);
}

/** formRefusals against the gift's form as already read (undefined: gone). */
function refusalsOn(
  form: Awaited<ReturnType<typeof findFormCached>>,
  sub: SubscriptionsTable,
  change: SubscriptionChange,
): string[] {
  if (!form || form.deletedAt !== null) return [];
  const type = form.config.formType;
  if (type !== "EMBED_FORM" && type !== "CROWDFUNDING_FORM") return [];
  const priced = priceOrder(
    form.config,
    {
      frequency: change.frequency ?? (sub.frequency as Frequency),
      amount: change.amountCents ?? sub.amount_cents,
    },
    NO_SALES,
    DEFAULT_FEE_RATE,
    sub.currency,
  );
  return priced.ok ? [] : priced.errors.map((e) => e.message);
}

/**
 * The frequencies a donor may change an ACTIVE recurring gift to in the portal (its own included): each
 * recurring frequency its form's checkout would take with the gift's amount, or every recurring frequency
 * when the form is gone or deleted (the rule `formRules` applies). A cancelled gift takes none.
 */
export async function changeableFrequencies(
  deps: AppDeps,
  sub: SubscriptionsTable,
): Promise<RecurringFrequency[]> {
  if (sub.status !== "ACTIVE") return [];
  const form = await findFormCached(deps.store, sub.form_id);
  return RECURRING_FREQUENCIES.filter(
    (frequency) => refusalsOn(form, sub, { frequency, skipNext: false, cancel: false }).length === 0,
  );
}

/**
 * Why the gift's processor would refuse every renewal of `amountCents` (with the fee, when the donor covers
 * it): below its smallest or above its largest charge, as the checkout refuses such a gift. Undefined when
 * it would take it, or states no limits (or cannot be opened now: the charge will say why).
 */
async function beyondProcessorLimits(
  deps: AppDeps,
  sub: SubscriptionsTable,
  amountCents: number,
): Promise<string | undefined> {
  const org = await getOrganization(deps.store.db, sub.organization_id);
  if (!org) return undefined;
  let processor: PaymentProcessor;
  try {
    processor = deps.processors.named(sub.processor, org);
  } catch (err) {
    if (err instanceof ProcessorError) return undefined;
    throw err;
  }
  const totalCents = amountCents + renewalFeeCents(sub, amountCents, org.feeRate);
  return chargeLimitRefusal(processor, totalCents, sub.currency)?.message;
}

/**
 * A change to a recurring gift, from the API or the donor portal; a refusal is a 409. `formRules`: the
 * gift it leaves must also be one its form's checkout would take (the donor portal's changes); a refusal
 * is a 400 with every problem.
 */
export async function applySubscriptionChange(
  deps: AppDeps,
  sub: SubscriptionsTable,
  change: SubscriptionChange,
  actor: AuditActor,
  options: { formRules?: boolean } = {},
): Promise<SubscriptionsTable> {
  // A cancelled gift takes no change at all: its 409 comes first.
  if (options.formRules && sub.status === "ACTIVE") {
    const refusals = await formRefusals(deps, sub, change);
    if (refusals.length) throw ApiError.validation(refusals);
  }
  if (change.amountCents !== undefined && !isExpressible(change.amountCents, sub.currency))
    throw ApiError.validation([`amount must be a whole number of ${sub.currency}, which has no decimals`]);
  if (change.amountCents !== undefined && sub.status === "ACTIVE") {
    const refusal = await beyondProcessorLimits(deps, sub, change.amountCents);
    if (refusal) throw ApiError.validation([refusal]);
  }
  try {
    return await changeSubscription(deps.store, sub, change, actor, deps.now());
  } catch (err) {
    if (err instanceof SubscriptionChangeRefused) throw new ApiError(409, err.message);
    throw err;
  }
}

export function subscriptionRoutes(deps: AppDeps): RouteSpec[] {
  const db = deps.store.db;
  const tags = ["Subscriptions"];

  return [
    defineRoute({
      method: "get",
      path: "/v1/subscriptions",
      operationId: "listSubscriptions",
      permission: "subscriptions:read",
      tags,
      summary: "List subscriptions",
      description:
        "Newest first. Filters (all optional, all combined): `status` (`ACTIVE` or `CANCELLED`), `search` (a donor's name or e-mail address containing it, any case, or a `sub_…` id exactly), `frequency`, `contactId`. A `lastEvaluatedKey` pages only the list of the filters it came from: sent with other filters it is a 400.",
      query: subscriptionListQuery,
      responses: {
        200: {
          description: "A page of subscriptions",
          schema: pageSchema("subscriptions", subscriptionSchema),
          csv: csvDoc("recurring gift"),
        },
        ...standardErrors,
      },
      handler: async (c, { query }) => {
        const orgId = c.get("auth").organizationId;
        const filters = subscriptionFilters(query);
        if (wantsCsv(c)) return exportSubscriptions(c, deps, orgId, filters);
        const { status, ...others } = filters;
        const list = filteredList(`subscriptions:${status ?? "all"}`, others);
        const after = query.lastEvaluatedKey ? decodeCursor(list, orgId, query.lastEvaluatedKey) : undefined;
        const rows = await listSubscriptions(db, orgId, filters, query.limit + 1, after);
        return c.json(
          page(
            "subscriptions",
            rows,
            query.limit,
            presentSubscription,
            (r) => ({ sort: r.created_at, id: r.id }),
            (p) => encodeCursor(list, orgId, p),
          ),
        );
      },
    }),

    defineRoute({
      method: "get",
      path: "/v1/subscriptions/{id}",
      operationId: "getSubscription",
      permission: "subscriptions:read",
      tags,
      summary: "Get a subscription",
      params: idParams,
      responses: {
        200: { description: "The subscription", schema: subscriptionSchema },
        ...standardErrors,
        404: notFound,
      },
      handler: async (c, { params }) =>
        c.json(presentSubscription(await loadOwnedSubscription(db, c.get("auth").organizationId, params.id))),
    }),

    defineRoute({
      method: "put",
      path: "/v1/subscriptions/{id}",
      operationId: "updateSubscription",
      permission: "subscriptions:write",
      tags,
      summary: "Cancel a subscription or change its amount",
      description:
        '`status: "CANCELLED"` cancels for good: no charge starts after the cancel (a charge a billing pass had already begun completes, but the schedule does not move on). `amount` (in the subscription\'s currency: 1 to 1,000,000 as at the checkout, 2 decimals) is the recurring gift from the next charge on; a covered fee is recomputed on it. Send either or both; neither is a 400. A cancelled subscription is a 409. Emits `subscription.updated` for an amount change and `subscription.cancelled` for a cancel.',
      params: idParams,
      body: subscriptionUpdateSchema,
      rules: [
        { fields: ["amount"], rule: "a whole amount when the subscription's currency has no decimals (JPY)" },
      ],
      responses: {
        200: { description: "The subscription", schema: subscriptionSchema },
        ...standardErrors,
        404: notFound,
        409: { description: "The subscription is cancelled", schema: errorSchema },
      },
      handler: async (c, { params, body }) => {
        const auth = c.get("auth");
        const sub = await loadOwnedSubscription(db, auth.organizationId, params.id);
        const row = await applySubscriptionChange(
          deps,
          sub,
          { amountCents: body.amount, cancel: body.status === "CANCELLED" },
          auth.actor,
        );
        return c.json(presentSubscription(row));
      },
    }),

    defineRoute({
      method: "post",
      path: "/v1/subscriptions/{id}/payment-method-update-link",
      operationId: "createPaymentMethodUpdateLink",
      permission: "subscriptions:write",
      // The link's token is in the answer: an Idempotency-Key keeps it sealed, never in the clear.
      answerHoldsSecret: true,
      tags,
      summary: "Create a link for the donor to update the payment method",
      description: `A hosted page (\`${UPDATE_PAGE_PATH}/…\`) where the donor enters a new card or bank account for this subscription. It shows only the organization, amount, frequency and the current method's brand and last 4. The link is unguessable, single-use and expires after \`expiresInMinutes\` (30–1440, default 60); an expired or used link shows a 410 page. \`returnUrl\` (https, http on localhost; no user name or password; a fragment is kept) is offered to the donor afterwards. Only for ACTIVE subscriptions (else 409). Success emits \`subscription.payment_method_updated\` and \`subscription.updated\`.`,
      params: idParams,
      body: updateLinkBodySchema,
      bodyOptional: true,
      responses: {
        201: { description: "The link", schema: updateLinkResponseSchema },
        ...standardErrors,
        404: notFound,
        409: { description: "The subscription is cancelled", schema: errorSchema },
      },
      handler: async (c, { params, body }) => {
        const orgId = c.get("auth").organizationId;
        const sub = await loadOwnedSubscription(db, orgId, params.id);
        if (sub.status !== "ACTIVE") throw cancelled();
        const nowMs = deps.now();
        const link = await createUpdateLink(
          db,
          {
            organizationId: orgId,
            subscriptionId: sub.id,
            allowedMethods: body.allowedPaymentMethods,
            returnUrl: body.returnUrl ?? null,
            expiresAtMs: nowMs + body.expiresInMinutes * 60_000,
          },
          deps.config.publicUrl,
          nowMs,
        );
        const shown = presentSubscription(sub);
        return c.json(
          {
            id: link.id,
            url: link.url,
            expiresAt: wireTime(link.expiresAt),
            subscription: {
              id: shown.id,
              status: shown.status,
              amount: shown.amount,
              frequency: shown.frequency,
              nextBillingDate: shown.nextBillingDate,
            },
          },
          201,
          // The link is a bearer secret for the donor's payment method: no cache on the way keeps it.
          { "Cache-Control": "no-store" },
        );
      },
    }),
  ];
}
