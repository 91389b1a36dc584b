import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recurringForm, subscribe } from "../billing/support.js";
import { setupTestApp, type TestApp } from "../support/testApp.js";

/**
 * Generated bad bodies against PUT /v1/subscriptions/{id}: every one must be a 4xx JSON
 * error, never a 5xx, and must leave the subscription and the event outbox as they were.
 */

type Json = Record<string, unknown>;

const badStatus = fc.constantFrom<unknown>(
  "ACTIVE",
  "cancelled",
  "CANCELED",
  "",
  1,
  null,
  true,
  ["CANCELLED"],
  {},
);
const badAmount = fc.oneof(
  fc.constantFrom<unknown>(0, -0.01, 1_000_000.01, 10.001, "10", null, true, [10], {}, 1e300, -1e300),
  fc.double({ min: -1e9, max: 0, noNaN: true }),
  fc.double({ min: 1_000_000.001, max: 1e12, noNaN: true }),
  fc.integer({ min: 1, max: 99_999 }).map((n) => n / 1000 + 0.0001),
);

const badBody: fc.Arbitrary<{ json?: unknown; raw?: string }> = fc.oneof(
  badStatus.map((status) => ({ json: { status } })),
  badAmount.map((amount) => ({ json: { amount } })),
  fc.tuple(badStatus, badAmount).map(([status, amount]) => ({ json: { status, amount } })),
  // One good field never rescues a bad one.
  badAmount.map((amount) => ({ json: { status: "CANCELLED", amount } })),
  badStatus.map((status) => ({ json: { status, amount: 10 } })),
  fc
    .dictionary(
      fc
        .string({ minLength: 1, maxLength: 10 })
        .filter((k) => k !== "status" && k !== "amount" && k !== "__proto__"),
      fc.jsonValue({ maxDepth: 2 }),
      { minKeys: 1, maxKeys: 3 },
    )
    .map((extra) => ({ json: { amount: 10, ...extra } })),
  fc.constant({ json: {} }),
  fc.jsonValue({ maxDepth: 3 }).map((json) => ({ json })),
  fc.constantFrom("", "{", "[]", "null", "7", "{amount: 10}").map((raw) => ({ raw })),
);

function isValid(json: unknown): boolean {
  if (json === null || typeof json !== "object" || Array.isArray(json)) return false;
  const b = json as Json;
  if (Object.keys(b).some((k) => k !== "status" && k !== "amount")) return false;
  if (b.status !== undefined && b.status !== "CANCELLED") return false;
  if (b.amount !== undefined) {
    const a = b.amount;
    if (typeof a !== "number" || !(a > 0 && a <= 1_000_000) || Math.abs(Math.round(a * 100) - a * 100) > 1e-6)
      return false;
  }
  return b.status !== undefined || b.amount !== undefined;
}

let t: TestApp;
let subId: string;

beforeAll(async () => {
  t = await setupTestApp({ env: { CHECKOUT_LIMIT_PER_IP: "0" } });
  const formId = await recurringForm(t);
  subId = (await subscribe(t, formId, { amount: 25 })).id;
});
afterAll(() => t.close());

async function snapshot() {
  const [sub, events] = await Promise.all([
    t.store.db.selectFrom("subscriptions").selectAll().where("id", "=", subId).executeTakeFirstOrThrow(),
    t.store.db.selectFrom("outbox_events").select("id").execute(),
  ]);
  return JSON.stringify({ sub, events: events.length });
}

describe("PUT /v1/subscriptions/{id} with generated bad bodies", () => {
  it("answers each with a 4xx JSON error and changes nothing", async () => {
    await fc.assert(
      fc.asyncProperty(badBody, async (body) => {
        fc.pre(body.raw !== undefined || !isValid(body.json));
        const before = await snapshot();
        const res = await t.request<Json>("PUT", `/v1/subscriptions/${subId}`, {
          body: body.json,
          rawBody: body.raw,
        });
        expect(res.status, res.text.slice(0, 300)).toBeGreaterThanOrEqual(400);
        expect(res.status, res.text.slice(0, 300)).toBeLessThan(500);
        expect(typeof res.body.error).toBe("string");
        expect(await snapshot()).toBe(before);
      }),
      { numRuns: 200 },
    );
  });
});
