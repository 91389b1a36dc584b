import type { Context } from "hono";
import { z } from "zod";
import { checkoutRequestSchema, quoteRequestSchema } from "../../shared/schemas/checkout.js";
import { publicFormViewSchema } from "../../shared/schemas/publicForm.js";
import {
  completeCheckout,
  loadPublicForm,
  PromoCodeRefused,
  quoteOrder,
  runCheckout,
} from "../checkout/engine.js";
import {
  checkAttemptLimits,
  checkHoneypot,
  checkPromoGuesses,
  checkQuoteLimits,
  countDecline,
  countPromoFailure,
} from "../checkout/guards.js";
import { resolveElementPrefill } from "../checkout/prefill.js";
import { paymentOptions, publicFormView } from "../checkout/publicView.js";
import { ApiError } from "../errors.js";
import { isUuid } from "../ids.js";
import { checkoutAssetUrl } from "../pages/assets.js";
import { stockTaken } from "../store/inventory.js";
import { siteOrigins } from "../store/organizations.js";
import type { AppDeps, AppEnv } from "./env.js";
import { checkSubmissionOrigin, clientIp } from "./requestSource.js";
import { type BodyRule, defineRoute, errorSchema, pathId, type RouteSpec } from "./route.js";

/**
 * The donor checkout's public API (under /api): no key. Reads (form view, quote) are open to any origin;
 * checkouts are accepted from the form host's own pages (hosted page, iframe, overlay iframe) or from
 * non-browser clients. The widget is built on exactly these three routes.
 */

const formIdParams = z.object({ formId: pathId("The form's formID (UUID)") });

const publicErrors = {
  400: {
    description: "Validation failed (every problem listed), sold out, or the form does not accept donations",
    schema: errorSchema,
  },
  404: { description: "No such form", schema: errorSchema },
};

/** What a quote or checkout is checked against: the form it is for. */
const ORDER_RULES: BodyRule[] = [
  { fields: [], error: "This form is not accepting donations", rule: "the form is active" },
  { fields: ["frequency"], rule: "frequency must be one of the form's frequencies" },
  { fields: ["fund"], rule: "fund must be one of the form's funds" },
  {
    fields: ["amount"],
    rule: "amount must be a preset of the form for the frequency or, where the form allows custom amounts, 1 to 1,000,000; on a giving-level form a level's amount; on event and sponsorship forms none",
  },
  { fields: ["givingLevel"], rule: "givingLevel only on giving-level forms, naming one of its levels" },
  { fields: ["product"], rule: "product only on sponsorship forms, naming one of its groups and options" },
  {
    fields: ["tickets"],
    rule: "tickets only on event forms, naming its tickets, at most maxPerOrder each, at least one ticket",
  },
  { fields: ["promoCode"], rule: "promoCode only on event forms, a live code of the form" },
  { fields: ["extraDonation"], rule: "extraDonation only on event forms" },
  { fields: ["coverFees"], rule: "coverFees only where the form offers it" },
];
const CHECKOUT_RULES: BodyRule[] = [
  ...ORDER_RULES,
  {
    fields: ["donor"],
    rule: "donor.phone, donor.organizationName and donor.address only where the form collects them",
  },
  { fields: ["anonymous"], rule: "anonymous only where the form offers it" },
  { fields: ["tribute"], rule: "tribute only where the form takes dedications (enableTribute)" },
  {
    fields: ["customInputs"],
    rule: "customInputs: an answer to each required input of the form (and the organization), each by its id or title, options from its list",
  },
  {
    fields: ["paymentMethod"],
    rule: "paymentMethod: required unless the total is 0; card and bank details on the sandbox processor, a token on Stripe",
  },
];

const quoteSchema = z.object({
  currency: z.string().meta({ description: "ISO 4217: the organization's currency" }),
  frequency: z.string(),
  fund: z.string(),
  lines: z.array(
    z.object({
      kind: z.enum(["donation", "ticket", "product", "extra_donation"]),
      label: z.string(),
      unitPrice: z.number(),
      quantity: z.number(),
      amount: z.number(),
      admits: z.number().optional(),
    }),
  ),
  subtotal: z.number(),
  discount: z.number(),
  promoCode: z.string().nullable(),
  coverFees: z.boolean(),
  fee: z.number().meta({ description: "The processing fee the donor covers (0 unless coverFees)" }),
  total: z.number().meta({ description: "What the donor is charged" }),
  attendees: z.number(),
});

const receiptSchema = z.object({
  payment: z.looseObject({
    paymentID: z.string(),
    status: z.enum(["COMPLETED", "PENDING"]),
    total: z.number(),
    frequency: z.string(),
    subscription: z
      .object({
        id: z.string(),
        amount: z.number(),
        frequency: z.string(),
        nextBillingDate: z.string(),
        nextBillingDay: z.string().meta({
          description:
            "The next charge's day (YYYY-MM-DD) in the organization's time zone, as its receipt tells it",
        }),
      })
      .nullable(),
  }),
  message: z.string(),
});

const actionSchema = z.object({
  status: z.literal("requires_action"),
  paymentID: z.string(),
  clientSecret: z
    .string()
    .meta({ description: "For the processor's script in the page (Stripe.js handleNextAction)" }),
  message: z.string(),
});

const declineSchema = z.object({
  error: z.string().meta({ example: "Your card was declined. Try another card." }),
  code: z.string().meta({ example: "card_declined" }),
  paymentID: z.string(),
});

/** Runs `work`, counting a refused promo code (`promoCode`) against the donor's address on the form. */
async function countingPromoRefusals<T>(
  deps: AppDeps,
  ip: string,
  formId: string,
  promoCode: string | undefined,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof PromoCodeRefused) await countPromoFailure(deps, ip, formId, promoCode);
    throw err;
  }
}

/**
 * The reads are open to any origin, whatever they answer: an error (404, 410, 400, 429) carries
 * `Access-Control-Allow-Origin: *` too, so that another site's page can tell a deleted form from a
 * network failure. Put in the pipeline's own headers, which every answer of the request gets.
 */
const openToAnyOrigin = (c: Context<AppEnv>) => {
  c.get("answerHeaders")["Access-Control-Allow-Origin"] = "*";
};

/** Idempotency-Keys of a form's public routes: scoped by the form, however its id was spelled (ids are lower case). */
const formScope = (c: Context<AppEnv>) => `public:${(c.req.param("formId") ?? "").toLowerCase()}`;

/**
 * A form id that is no UUID names no form: 404 at once, as the form's lookup would answer, before the
 * id is used in rate-limit and Idempotency-Key records (where an id of thousands of characters would not fit).
 */
const onlyFormIds = (c: Context<AppEnv>) => {
  if (!isUuid(c.req.param("formId") ?? "")) throw new ApiError(404, "Form not found");
};

export function checkoutRoutes(deps: AppDeps): RouteSpec[] {
  return [
    defineRoute({
      method: "get",
      path: "/api/forms/{formId}",
      operationId: "getPublicForm",
      auth: false,
      tags: ["Donor checkout (public)"],
      summary: "A form as donors see it, with a checkout link's prefill applied",
      description:
        "No API key. Donor-facing settings only, stock left per ticket and product, the fundraising bar and donor list when enabled, and `prefill` for `?elementid=` of an active link of this form (null otherwise). An inactive form is returned with `active: false`; a deleted one answers 410.",
      params: formIdParams,
      query: z.object({
        elementid: z.string().optional().meta({
          description:
            "A checkout link's id; one that names no active link of this form (too long included) gives no prefill, as the hosted page does",
        }),
      }),
      before: (c) => {
        openToAnyOrigin(c);
        onlyFormIds(c);
      },
      responses: {
        200: {
          description: "The public form view",
          schema: publicFormViewSchema,
        },
        404: publicErrors[404],
        410: { description: "The form was deleted", schema: errorSchema },
      },
      handler: async (c, { params, query }) => {
        const db = deps.store.db;
        const loaded = await loadPublicForm(deps.store, params.formId);
        if (loaded.deleted) throw new ApiError(410, "This form has been deleted");
        // Longer than any link id: no link, as the hosted page reads it.
        const elementId = query.elementid && query.elementid.length <= 100 ? query.elementid : undefined;
        const resolution = await resolveElementPrefill(db, loaded.form.id, elementId);
        const prefill = resolution.kind === "ok" ? resolution.prefill : null;
        const view = await publicFormView(
          db,
          loaded,
          await stockTaken(db, loaded.form),
          prefill,
          paymentOptions(loaded.org, deps.processors.forOrganization(loaded.org), {
            stripeModule: checkoutAssetUrl("stripe.js"),
            stripeJsUrl: deps.config.stripeJsUrl,
          }),
        );
        return c.json(view, 200, { "Access-Control-Allow-Origin": "*", "Cache-Control": "no-store" });
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/forms/{formId}/overlay",
      operationId: "getOverlayPermission",
      auth: false,
      tags: ["Donor checkout (public)"],
      summary: "Whether the calling site may open this form in the overlay",
      description:
        "No API key; asked by overlay.js before it shows a form. 204 when the request's `Origin` is one of the form's organization's sites (the origins of its `organizationBaseURLs`), or when there is no `Origin`; 403 with the reason otherwise. The overlay page itself is framed only by those sites (CSP `frame-ancestors`), whatever this answers.",
      params: formIdParams,
      before: (c) => {
        openToAnyOrigin(c);
        onlyFormIds(c);
      },
      responses: {
        204: { description: "The overlay may open this form on this site" },
        403: { description: "This site is not one of the organization's sites", schema: errorSchema },
        404: publicErrors[404],
        410: { description: "The form was deleted", schema: errorSchema },
      },
      handler: async (c, { params }) => {
        const cors = { "Access-Control-Allow-Origin": "*" };
        const found = await loadPublicForm(deps.store, params.formId).catch((err: unknown) => {
          if (err instanceof ApiError) return undefined;
          throw err;
        });
        if (!found) return c.json({ error: "Form not found" }, 404, cors);
        // As the form's view and hosted page answer: the overlay then says so instead of opening.
        if (found.deleted) return c.json({ error: "This form has been deleted" }, 410, cors);
        const origin = c.req.header("Origin");
        if (origin === undefined || siteOrigins(found.org).includes(origin)) return c.body(null, 204, cors);
        return c.json(
          {
            error: `${origin} is not one of this form's organization's sites (organizationBaseURLs): its overlay opens only there`,
          },
          403,
          cors,
        );
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/forms/{formId}/quote",
      operationId: "quoteCheckout",
      auth: false,
      tags: ["Donor checkout (public)"],
      summary: "Price an order on the server",
      description:
        "The same body as a checkout's order fields. Returns every line, the discount, the covered fee and the total the checkout would charge now; nothing is held. A total above zero but below the processor's smallest charge in the currency (Stripe: ¥50, SEK 3, $0.50, …) is a 400, as the checkout would answer.",
      params: formIdParams,
      body: quoteRequestSchema,
      rules: ORDER_RULES,
      idempotencyScope: formScope,
      before: (c) => {
        openToAnyOrigin(c);
        onlyFormIds(c);
      },
      responses: {
        200: { description: "The price", schema: quoteSchema },
        429: {
          description: "Too many quotes from this address or on this form, or too many refused promo codes",
          schema: errorSchema,
        },
        ...publicErrors,
      },
      handler: async (c, { params, body }) => {
        const ip = clientIp(c, deps.config.trustProxyHops);
        const formId = params.formId.toLowerCase();
        await checkQuoteLimits(deps, ip, formId);
        await checkPromoGuesses(deps, ip, formId, body.promoCode);
        const quote = await countingPromoRefusals(deps, ip, formId, body.promoCode, () =>
          quoteOrder(deps, params.formId, body),
        );
        return c.json(quote, 200, { "Access-Control-Allow-Origin": "*" });
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/forms/{formId}/checkout",
      operationId: "checkout",
      auth: false,
      tags: ["Donor checkout (public)"],
      summary: "Give or buy: charge the donor and record the payment, contact and subscription",
      description:
        "Accepted from the form host's own pages or from clients that send no Origin. Send an `Idempotency-Key` so that a retried submission never charges twice (the first response is replayed). 201 for a completed payment (or a PENDING bank payment); 402 with `code` when the payment is declined (a FAILED payment is recorded, no subscription); 400 for bad input and sold-out stock; 429 when attempt limits are reached.",
      params: formIdParams,
      body: checkoutRequestSchema,
      rules: CHECKOUT_RULES,
      idempotencyScope: formScope,
      // Before a replay too: an answer kept for the form's pages is never handed to another site.
      before: (c) => {
        checkSubmissionOrigin(c, deps.config);
        onlyFormIds(c);
      },
      responses: {
        201: { description: "Paid (or bank payment pending)", schema: receiptSchema },
        202: {
          description:
            "The donor's bank asks them to confirm (3-D Secure): run it in the page, then `…/complete`",
          schema: actionSchema,
        },
        402: { description: "Declined", schema: declineSchema },
        403: { description: "Submitted from another site", schema: errorSchema },
        409: {
          description: "The organization takes no payments yet (no processor connected)",
          schema: errorSchema,
        },
        503: {
          description: "The payment processor could not be reached; the answer says whether to try again",
          schema: errorSchema,
        },
        429: {
          description: "Too many attempts (per address, per form, or declines per card)",
          schema: errorSchema,
        },
        ...publicErrors,
      },
      handler: async (c, { params, body }) => {
        checkHoneypot(body.website);
        const ip = clientIp(c, deps.config.trustProxyHops);
        await checkAttemptLimits(deps, ip, params.formId.toLowerCase());
        await checkPromoGuesses(deps, ip, params.formId.toLowerCase(), body.promoCode);
        const result = await countingPromoRefusals(
          deps,
          ip,
          params.formId.toLowerCase(),
          body.promoCode,
          () => runCheckout(deps, params.formId, body, { acceptLanguage: c.req.header("Accept-Language") }),
        );
        if (result.status === 402) await countDecline(deps, ip, params.formId.toLowerCase());
        return c.json(result.body, result.status);
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/forms/{formId}/checkout/{paymentId}/complete",
      operationId: "completeCheckout",
      auth: false,
      tags: ["Donor checkout (public)"],
      summary: "Finish a checkout the donor confirmed with their bank (3-D Secure)",
      description:
        "After a checkout answered 202 `requires_action` and the page ran the processor's confirmation (Stripe.js `handleNextAction` with the `clientSecret`), this asks the processor how the payment stands and records it: 201 as a checkout, 402 when the bank refused, 202 again while it still waits. Safe to repeat: a recorded payment is answered as it was.",
      params: formIdParams.extend({
        paymentId: pathId("The paymentID of the 202 answer"),
      }),
      body: z.strictObject({}),
      bodyOptional: true,
      idempotencyScope: formScope,
      // Before a replay too, as the checkout's.
      before: (c) => {
        checkSubmissionOrigin(c, deps.config);
        onlyFormIds(c);
      },
      responses: {
        201: { description: "Paid (or bank payment pending)", schema: receiptSchema },
        202: { description: "Still waiting for the donor's confirmation", schema: actionSchema },
        402: { description: "Declined", schema: declineSchema },
        403: { description: "Submitted from another site", schema: errorSchema },
        409: { description: "Still being processed", schema: errorSchema },
        ...publicErrors,
      },
      handler: async (c, { params }) => {
        const result = await completeCheckout(deps, params.formId, params.paymentId);
        return c.json(result.body, result.status);
      },
    }),
  ];
}
