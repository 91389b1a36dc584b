import crypto from "node:crypto";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import type { FormFull } from "../../server/api/forms/present.js";
import { recordDispute } from "../../server/payments/transition.js";
import type { CardBrand } from "../../server/processors/port.js";
import type {
  CARD_BRANDS,
  contactEventData,
  formEventData,
  paymentEventData,
  subscriptionEventData,
  WebhookEventData,
} from "../../server/webhooks/eventSchemas.js";
import { SIGNATURE_TOLERANCE_SECONDS, verifyWebhookSignature } from "../../server/webhooks/signature.js";
import type { ContactView } from "../../server/wire/contact.js";
import type { PaymentView } from "../../server/wire/payment.js";
import type { SubscriptionView } from "../../server/wire/subscription.js";
import { EVENT_TYPES, type EventType } from "../../shared/schemas/webhook.js";
import { bank, CARDS, card, checkout, createForm, donor } from "../support/checkout.js";
import { dialect, type TestApp, validForms } from "../support/testApp.js";
import { type Received, type Receiver, startReceiver } from "../webhooks/receiver.js";
import { type Registered, register, setupWebhookTest, type WebhookTest } from "../webhooks/support.js";

/**
 * The OpenAPI document's `webhooks` are true: one operation per event type the server emits, and real
 * deliveries of every type (caused through the API, the donor checkout, the update-link page and the
 * processor's dispute path) carry the documented headers, verify as the description says, and match the
 * documented body schema, which refuses anything looser.
 */

// ---------------------------------------------------------------------------------------------
// Compile time: the payload schemas have the shapes the server's presenters build.

/** Literal types widened to their primitives; objects and arrays compared member by member. */
type Shape<T> = T extends string
  ? string
  : T extends number
    ? number
    : T extends boolean
      ? boolean
      : T extends null | undefined
        ? T
        : T extends readonly (infer U)[]
          ? Shape<U>[]
          : { [K in keyof T]: Shape<T[K]> };
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** The same properties, optionality, nullability and kinds, and every documented value one the server may build. */
type Exact<Doc, Built> =
  Same<Shape<Doc>, Shape<Built>> extends true ? ([Doc] extends [Built] ? true : false) : false;
/** The same properties, the documented values a subset of what the presenter may build. */
type Narrower<Doc, Built> =
  Same<keyof Doc, keyof Built> extends true ? ([Doc] extends [Built] ? true : false) : false;
/** A full form (as events carry it) always has the event fields, null when unset. */
type FullForm = FormFull & Required<Pick<FormFull, "eventDate" | "startTime" | "endTime" | "location">>;

const presenterShapes: true[] = [
  true satisfies Exact<z.output<typeof paymentEventData>, PaymentView>,
  true satisfies Narrower<WebhookEventData<"donation.created">, PaymentView>,
  true satisfies Exact<z.output<typeof subscriptionEventData>, SubscriptionView>,
  true satisfies Narrower<WebhookEventData<"subscription.created">, SubscriptionView>,
  true satisfies Narrower<WebhookEventData<"subscription.cancelled">, SubscriptionView>,
  true satisfies Exact<z.output<typeof contactEventData>, ContactView>,
  true satisfies Exact<z.output<typeof formEventData>, FullForm>,
  true satisfies Same<(typeof CARD_BRANDS)[number], CardBrand>,
];

// ---------------------------------------------------------------------------------------------

type Json = Record<string, unknown>;
type JsonSchema = Json;

interface HeaderParam {
  name: string;
  in: string;
  required?: boolean;
  schema: JsonSchema;
}
interface WebhookOperation {
  summary: string;
  description: string;
  parameters: HeaderParam[];
  requestBody: { required: boolean; content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, { description: string }>;
}
interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Json }> } }>>;
  webhooks: Record<string, { post: WebhookOperation }>;
  components: Json;
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

/** Receivers see header names in lower case. */
const header = (got: Received, name: string) => got.headers[name.toLowerCase()] as string | undefined;

describe(`OpenAPI webhooks (${dialect})`, () => {
  let w: WebhookTest;
  let t: TestApp;
  let doc: OpenApiDocument;
  let receiver: Receiver;
  let hook: Registered;
  const validators = new Map<string, ReturnType<typeof ajv.compile>>();

  /** The documented body schema of an event type, its component references resolved in the document. */
  const bodyValidator = (type: string) => {
    let validate = validators.get(type);
    if (!validate) {
      const schema = doc.webhooks[type]?.post.requestBody.content["application/json"].schema;
      if (!schema) throw new Error(`no documented body for ${type}`);
      validate = ajv.compile({ ...schema, $id: `urn:almoner:webhook:${type}`, components: doc.components });
      validators.set(type, validate);
    }
    return validate;
  };
  const problems = (type: string, body: unknown): string | null => {
    const validate = bodyValidator(type);
    return validate(body) ? null : ajv.errorsText(validate.errors);
  };

  beforeAll(async () => {
    w = await setupWebhookTest();
    t = w.t;
    const res = await t.request<OpenApiDocument>("GET", "/v1/openapi.json", { key: null });
    expect(res.status).toBe(200);
    doc = res.body;
    receiver = await startReceiver();
    hook = await register(t, receiver, [...EVENT_TYPES]);
  });
  afterAll(async () => {
    await receiver?.close();
    await w?.close();
  });

  it("payload schemas have the presenters' shapes (checked by the compiler)", () => {
    expect(presenterShapes.every(Boolean)).toBe(true);
  });

  it("documents one POST per event type the server emits, and no other", () => {
    expect(doc.openapi).toBe("3.1.0");
    const documented = Object.keys(doc.webhooks).sort();
    expect(documented).toEqual([...EVENT_TYPES].sort());
    // The same list the registration endpoint accepts, as the document itself states it.
    const registration = doc.paths["/v1/webhooks"].post.requestBody?.content["application/json"].schema as {
      properties: { events: { items: { enum: string[] } } };
    };
    expect([...registration.properties.events.items.enum].sort()).toEqual(documented);
    for (const type of EVENT_TYPES) {
      const item = doc.webhooks[type];
      expect(Object.keys(item)).toEqual(["post"]);
      const op = item.post;
      expect(op.requestBody.required).toBe(true);
      expect(Object.keys(op.requestBody.content)).toEqual(["application/json"]);
      // The body names its own event type and nothing else.
      const body = op.requestBody.content["application/json"].schema as {
        properties: { event: { enum: string[] } };
        required: string[];
        additionalProperties: boolean;
      };
      expect(body.properties.event.enum).toEqual([type]);
      expect(body.required.sort()).toEqual(["createdAt", "data", "event", "id"]);
      expect(body.additionalProperties).toBe(false);
      expect(op.parameters.map((p) => [p.in, p.name, p.required])).toEqual([
        ["header", "X-Webhook-ID", true],
        ["header", "X-Webhook-Timestamp", true],
        ["header", "X-Webhook-Signature", true],
        ["header", "User-Agent", true],
      ]);
      expect(Object.keys(op.responses).sort()).toEqual(["2XX", "default"]);
      // The answer rules under the configured retry schedule, and the verification recipe.
      expect(op.description).toContain("Any 2xx within 10 s delivers the event");
      expect(op.description).toContain(
        `tried again after about 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, 24 h (each ±20%), ${t.config.webhookRetryScheduleMs.length + 1} attempts in all`,
      );
      expect(op.description).toContain("HMAC-SHA256");
      expect(op.description).toContain(`more than ${SIGNATURE_TOLERANCE_SECONDS} s away`);
    }
  });

  it("every event type is delivered as documented: headers, signature and body", async () => {
    const deliveries = await causeEveryEvent(t);
    await receiver.waitFor(
      (got) => deliveries.ids.every((id) => got.some((g) => g.body.id === id)),
      20_000,
      "every outbox event",
    );
    const got = receiver.received;
    expect(new Set(got.map((g) => g.body.event))).toEqual(new Set(EVENT_TYPES));

    for (const delivery of got) {
      const type = delivery.body.event;
      const op = doc.webhooks[type].post;
      const context = `${type}: ${delivery.raw}`;
      // The body: the documented schema for its event type.
      expect(problems(type, JSON.parse(delivery.raw)), context).toBeNull();
      // Every documented header, each matching its schema; the body is declared JSON.
      expect(header(delivery, "Content-Type")).toBe("application/json");
      for (const param of op.parameters) {
        const value = header(delivery, param.name);
        expect(value, `${param.name} of ${type}`).toBeDefined();
        const validate = ajv.compile(param.schema);
        expect(validate(value), `${param.name}: ${value}`).toBe(true);
      }
      expect(header(delivery, "X-Webhook-ID")).toBe(delivery.body.id);
      // The signature, computed as the description says, and by the server's own verifier.
      const timestamp = header(delivery, "X-Webhook-Timestamp") as string;
      const expected = `sha256=${crypto
        .createHmac("sha256", Buffer.from(hook.secret, "utf8"))
        .update(Buffer.from(`${timestamp}.${delivery.raw}`, "utf8"))
        .digest("hex")}`;
      expect(header(delivery, "X-Webhook-Signature")).toBe(expected);
      expect(Math.abs(Date.now() / 1000 - Number(timestamp))).toBeLessThan(SIGNATURE_TOLERANCE_SECONDS);
      expect(
        verifyWebhookSignature({
          secret: hook.secret,
          body: delivery.raw,
          timestamp,
          signature: header(delivery, "X-Webhook-Signature"),
          nowSeconds: Date.now() / 1000,
        }),
      ).toBe(true);
      expect(delivery.verified).toBe(true);
    }

    // The variants the scenario was built to produce, each one validated above.
    const data = (type: EventType) => got.filter((g) => g.body.event === type).map((g) => g.body.data);
    expect(
      data("donation.created")
        .map((d) => [d.status, d.paymentMethod])
        .sort(),
    ).toEqual(
      expect.arrayContaining([
        ["COMPLETED", "card"],
        ["COMPLETED", "none"],
        ["FAILED", "card"],
        ["PENDING", "bank"],
      ]),
    );
    expect(data("donation.updated").map((d) => d.status)).toEqual(
      expect.arrayContaining(["COMPLETED", "REFUNDED"]),
    );
    expect(data("donation.updated").some((d) => d.dispute !== null)).toBe(true);
    expect(data("donation.created").some((d) => (d.tickets as unknown[]).length > 0 && d.promoCode)).toBe(
      true,
    );
    expect(data("form.created").some((d) => Array.isArray(d.productGroups))).toBe(true);
    expect(data("form.created").some((d) => d.formType === "EVENT" && d.eventDate)).toBe(true);
    expect(data("subscription.updated").map((d) => d.status)).toEqual(
      expect.arrayContaining(["ACTIVE", "CANCELLED"]),
    );
    expect(data("contact.created").some((d) => (d.phones as unknown[]).length > 0)).toBe(true);
  });

  it("the documented bodies refuse what the server never sends", () => {
    const sample = (type: EventType) => {
      const found = receiver.received.find((g) => g.body.event === type);
      if (!found) throw new Error(`no ${type} delivery`);
      return JSON.parse(found.raw) as Json & { data: Json };
    };
    const mutations: [EventType, (body: Json & { data: Json }) => void][] = [
      ["donation.created", (b) => Object.assign(b, { extra: 1 })],
      ["donation.created", (b) => Object.assign(b.data, { extra: 1 })],
      ["donation.created", (b) => delete b.data.dispute],
      ["donation.created", (b) => Object.assign(b, { createdAt: new Date().toISOString() })],
      ["donation.created", (b) => Object.assign(b, { createdAt: 1.5 })],
      ["donation.created", (b) => Object.assign(b.data, { date: "yesterday" })],
      ["donation.created", (b) => Object.assign(b.data, { status: "REFUNDED" })],
      ["donation.created", (b) => Object.assign(b, { event: "donation.updated" })],
      ["donation.created", (b) => Object.assign(b, { id: "evt_1" })],
      ["donation.updated", (b) => Object.assign(b.data, { status: "PROCESSING" })],
      ["donation.updated", (b) => Object.assign(b.data, { utm: { source: "x", other: "y" } })],
      ["subscription.created", (b) => Object.assign(b.data, { status: "CANCELLED" })],
      ["subscription.cancelled", (b) => Object.assign(b.data, { cancelledAt: null })],
      ["subscription.updated", (b) => Object.assign(b.data, { paymentMethod: { type: "card" } })],
      ["contact.created", (b) => Object.assign(b.data, { emailConsent: "YES" })],
      ["contact.updated", (b) => Object.assign(b.data, { totalTransactionCount: 0.5 })],
      ["form.created", (b) => Object.assign(b.data, { formType: "fundraising" })],
      ["form.updated", (b) => delete b.data.eventDate],
      ["ticket.checked_in", (b) => Object.assign(b.data, { checkedInAt: null })],
      ["ticket.checked_in", (b) => Object.assign(b.data, { code: "ABCD-EFGH-IJ" })],
    ];
    for (const [type, mutate] of mutations) {
      const body = sample(type);
      expect(problems(type, body), `${type} as delivered`).toBeNull();
      mutate(body);
      expect(problems(type, body), `${type} after ${mutate.toString()}`).not.toBeNull();
    }
  });
});

/** Causes every event type, returns the ids of every event the organization's outbox then holds. */
async function causeEveryEvent(t: TestApp): Promise<{ ids: string[] }> {
  const ok = (res: { status: number; text: string }, status = 200) => {
    expect(res.status, res.text).toBe(status);
  };

  // form.created: an event form with everything an event form can carry, a product form, a recurring form.
  const eventForm = await createForm(t, {
    ...validForms.event(),
    tickets: [
      { name: "Adult", price: 50, quantity: 100, maxPerOrder: 10, description: "One seat" },
      { name: "Table", price: 400, ticketType: "GROUP", groupSize: 8 },
      { name: "Volunteer", price: 0 },
    ],
    promoCodes: [
      { code: "HALF", discountType: "percentage", discountValue: 50, applicableTickets: ["Adult"] },
    ],
    customInputs: [
      { title: "Dietary needs", inputType: "short_text" },
      { title: "Sessions", inputType: "multi_select", options: ["Morning", "Evening"] },
    ],
    faqs: [{ question: "Parking?", answer: "On site" }],
    enableTimeAndLocation: true,
    eventDate: "2030-05-01",
    startTime: "18:00",
    endTime: "22:30",
    location: "Town hall",
    timeZone: "America/New_York",
    enablePhone: true,
    enableBillingAddress: true,
    enableOrganizationName: true,
  });
  const productForm = await createForm(t, validForms.sponsorship());
  const recurringForm = await createForm(t, {
    ...validForms.standard(),
    frequencies: ["ONE_TIME", "MONTHLY"],
    enableFundraisingBar: true,
    goal: 10_000,
  });
  expect(productForm).toBeTruthy();

  // form.updated
  ok(
    await t.request("PATCH", `/v1/forms/${eventForm}`, {
      body: { description: "An evening for the cause", headerImage: "https://example.org/header.png" },
    }),
  );

  // donation.created (card, tickets, promo code, answers, UTM) and contact.created (phone, address).
  const tickets = await checkout(t, eventForm, {
    tickets: [
      { name: "Adult", quantity: 2 },
      { name: "Volunteer", quantity: 1 },
    ],
    promoCode: "half",
    donor: {
      ...donor(),
      phone: "+1 617 555 0101",
      organizationName: "Acme",
      address: { line1: "1 Main St", city: "Boston", region: "MA", postal: "02101", country: "US" },
    },
    paymentMethod: card(),
    customInputs: { "Dietary needs": "None", Sessions: ["Evening"] },
    utm: { source: "newsletter", campaign: "spring" },
    emailOptIn: true,
  });
  ok(tickets, 201);
  const paymentId = String((tickets.body.payment as { paymentID: string }).paymentID);
  // A free registration (no payment method), a bank debit still clearing, a declined card.
  ok(await checkout(t, eventForm, { tickets: [{ name: "Volunteer", quantity: 1 }], donor: donor() }), 201);
  // ticket.checked_in: a ticket of that order checked in at the door.
  const sold = await t.request<{ tickets: { code: string }[] }>("GET", `/v1/forms/${eventForm}/tickets`);
  ok(sold);
  ok(await t.request("POST", `/v1/forms/${eventForm}/tickets/${sold.body.tickets[0].code}/check-in`));
  ok(await checkout(t, recurringForm, { amount: 25, donor: donor(), paymentMethod: bank() }), 201);
  const declined = await checkout(t, recurringForm, {
    amount: 25,
    donor: donor(),
    paymentMethod: card(CARDS.declined),
  });
  expect(declined.status, declined.text).toBe(402);

  // subscription.created, then subscription.updated (amount), payment_method_updated (+ updated), cancelled.
  const monthly = await checkout(t, recurringForm, {
    frequency: "MONTHLY",
    amount: 25,
    coverFees: true,
    donor: donor(),
    paymentMethod: card(),
  });
  ok(monthly, 201);
  const subId = (monthly.body.payment as { subscription: { id: string } }).subscription.id;
  ok(await t.request("PUT", `/v1/subscriptions/${subId}`, { body: { amount: 30 } }));
  const link = await t.request<{ url: string }>(
    "POST",
    `/v1/subscriptions/${subId}/payment-method-update-link`,
    { body: {} },
  );
  ok(link, 201);
  const page = await t.app.request(new URL(link.body.url).pathname, {
    method: "POST",
    body: new URLSearchParams({
      method: "card",
      cardNumber: "5555 5555 5555 4444",
      expiry: "12/34",
      cvc: "123",
    }),
  });
  expect(page.status, await page.text()).toBe(200);
  // A cancel with an amount change: subscription.updated carries the cancelled subscription.
  ok(await t.request("PUT", `/v1/subscriptions/${subId}`, { body: { status: "CANCELLED", amount: 35 } }));

  // donation.updated: a partial refund, a dispute (as the processor's webhook records it), the rest refunded.
  ok(await t.request("POST", `/v1/payments/${paymentId}/refund`, { body: { amount: 10 } }));
  await t.store.transact((trx) =>
    recordDispute(trx, t.deps.now(), paymentId, {
      id: "dp_test",
      status: "needs_response",
      reason: "fraudulent",
      amountCents: 1000,
      fundsWithdrawn: true,
      createdAt: new Date().toISOString(),
    }),
  );
  ok(await t.request("POST", `/v1/payments/${paymentId}/refund`, { body: {} }));

  // contact.created and contact.updated through the API.
  const contact = await t.request<{ contact: { id: string } }>("POST", "/v1/contacts", {
    body: {
      firstName: "Grace",
      lastName: "Hopper",
      emails: [{ value: "grace@example.org", isPrimary: true }],
      phones: [{ value: "not a number" }],
    },
  });
  ok(contact, 201);
  ok(
    await t.request("PUT", `/v1/contacts/${contact.body.contact.id}`, {
      body: { organizationName: "Navy", addresses: [{ city: "Arlington", country: "US" }] },
    }),
  );

  const events = await t.store.db
    .selectFrom("outbox_events")
    .select("id")
    .where("organization_id", "=", t.org.id)
    .execute();
  return { ids: events.map((e) => e.id) };
}
