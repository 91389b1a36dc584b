import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_TYPES } from "../../shared/schemas/webhook.js";
import { dialect, setupTestApp, type TestApp } from "../support/testApp.js";

/**
 * Generated bad bodies for POST /v1/webhooks and PUT /v1/webhooks/{id}: a selection of
 * good fields plus at least one problem (a bad URL, unknown or empty events, a wrong type, an unknown
 * field, a bad status; for PUT also a body without any valid field). Every one must be a 400 JSON with
 * details, never a 5xx, and must change nothing: no webhook created, the updated one exactly as before.
 */

type Json = Record<string, unknown>;
type Entries = [string, unknown][];

const RUNS = 150;

const noNul = (s: string) => !s.includes("\u0000");
const anyJson = fc.jsonValue({ maxDepth: 2 }).filter((v) => !JSON.stringify(v).includes("\\u0000"));
const notString = fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string()), fc.object());

const okUrl = fc.constantFrom(
  "https://example.org/hooks",
  "http://127.0.0.1:9/x",
  "https://a.b.example.net/p?q=1",
);
const okEvents = fc.uniqueArray(fc.constantFrom(...EVENT_TYPES), { minLength: 1, maxLength: 4 });
const okDescription = fc.string({ maxLength: 50 }).filter(noNul);

const badUrl = fc.oneof(
  notString,
  fc.constantFrom(
    "",
    "   ",
    "example.org/hooks",
    "ftp://example.org/x",
    "javascript:alert(1)",
    "https://user:pw@example.org/x",
    "https://example.org/x#frag",
    "//example.org",
    "http//broken",
  ),
  fc.string({ minLength: 2049, maxLength: 2100 }).map((s) => `https://example.org/${s.replace(/\s/g, "a")}`),
);
const badEvents = fc.oneof(
  notString.filter((v) => !Array.isArray(v)),
  fc.constant([]),
  fc
    .tuple(
      okEvents,
      fc.string({ maxLength: 30 }).filter((s) => !(EVENT_TYPES as readonly string[]).includes(s)),
    )
    .map(([ok, bad]) => [...ok, bad]),
  fc.constant(["DONATION.CREATED"]),
  fc.array(fc.oneof(fc.integer(), fc.constant(null)), { minLength: 1, maxLength: 3 }),
);
const unknownKey = fc
  .string({ minLength: 1, maxLength: 12 })
  .filter((k) => noNul(k) && !["url", "events", "description", "status", "__proto__"].includes(k));

function problems(forUpdate: boolean): fc.Arbitrary<Entries> {
  const list: fc.Arbitrary<Entries>[] = [
    badUrl.map((v): Entries => [["url", v]]),
    badEvents.map((v): Entries => [["events", v]]),
    fc
      .oneof(
        notString,
        fc
          .string({ minLength: 501, maxLength: 600 })
          .map((s) => s.replace(/\s/g, "x").replaceAll("\u0000", "x")),
      )
      .map((v): Entries => [["description", v]]),
    fc.tuple(unknownKey, anyJson).map((e): Entries => [e]),
  ];
  if (forUpdate)
    list.push(
      fc
        .oneof(fc.constantFrom("DELETED", "active", "PAUSED", ""), notString)
        .map((v): Entries => [["status", v]]),
    );
  else list.push(fc.constantFrom("ACTIVE", "DISABLED").map((v): Entries => [["status", v]]));
  return fc.oneof(...list);
}

function okEntries(forUpdate: boolean): fc.Arbitrary<Entries> {
  const fields = fc.record(
    {
      url: okUrl,
      events: okEvents,
      description: okDescription,
      ...(forUpdate ? { status: fc.constantFrom("ACTIVE", "DISABLED") } : {}),
    },
    { requiredKeys: forUpdate ? [] : ["url", "events"] },
  );
  return fields.map((r) => Object.entries(r));
}

/** Good fields with 1–3 problems written last (they win), or for PUT sometimes nothing valid at all. */
function badBody(forUpdate: boolean): fc.Arbitrary<Json> {
  const mixed = fc
    .tuple(okEntries(forUpdate), fc.array(problems(forUpdate), { minLength: 1, maxLength: 3 }))
    .map(([ok, bad]) => Object.fromEntries([...ok, ...bad.flat()]));
  if (!forUpdate) return mixed;
  return fc.oneof(mixed, fc.constant({}), fc.dictionary(unknownKey, anyJson, { minKeys: 1, maxKeys: 3 }));
}

describe(`webhooks API fuzz (${dialect})`, () => {
  let t: TestApp;
  let webhookId: string;
  let stored: unknown;

  const snapshot = async () => t.store.db.selectFrom("webhooks").selectAll().orderBy("id").execute();

  beforeAll(async () => {
    t = await setupTestApp({ env: { RATE_LIMIT_PER_HOUR: "1000000" } });
    const res = await t.request<{ webhookId: string }>("POST", "/v1/webhooks", {
      body: { url: "https://example.org/hooks", events: ["form.created"], description: "fuzzed" },
    });
    expect(res.status).toBe(201);
    webhookId = res.body.webhookId;
    stored = await snapshot();
  });
  afterAll(() => t.close());

  it("the good-field generators alone are accepted (sanity check of the fuzzer)", async () => {
    for (const entries of fc.sample(okEntries(false), { numRuns: 10, seed: 7 })) {
      const res = await t.request("POST", "/v1/webhooks", { body: Object.fromEntries(entries) });
      expect(res.status, res.text).toBe(201);
    }
    for (const entries of fc.sample(okEntries(true), { numRuns: 10, seed: 7 }).filter((e) => e.length > 0)) {
      const res = await t.request("PUT", `/v1/webhooks/${webhookId}`, { body: Object.fromEntries(entries) });
      expect(res.status, res.text).toBe(200);
    }
    await t.store.db.deleteFrom("webhooks").where("id", "!=", webhookId).execute();
    await t.request("PUT", `/v1/webhooks/${webhookId}`, {
      body: {
        url: "https://example.org/hooks",
        events: ["form.created"],
        description: "fuzzed",
        status: "ACTIVE",
      },
    });
    stored = (await snapshot()).map((row) => ({ ...row, updated_at: expect.any(String) }));
  });

  for (const method of ["POST", "PUT"] as const) {
    it(`answers every bad ${method} body with 400 JSON and details, and writes nothing`, async () => {
      await fc.assert(
        fc.asyncProperty(badBody(method === "PUT"), async (body) => {
          const path = method === "POST" ? "/v1/webhooks" : `/v1/webhooks/${webhookId}`;
          const res = await t.request<{ error: string; details?: unknown[] }>(method, path, { body });
          const shown = `${JSON.stringify(body)} → ${res.status} ${res.text}`;
          expect(res.status, shown).toBe(400);
          expect(res.headers.get("content-type") ?? "", shown).toMatch(/^application\/json/);
          expect(res.body.error, shown).toBe("Validation failed");
          expect(res.body.details?.length, shown).toBeGreaterThan(0);
          for (const d of res.body.details ?? []) expect(typeof d, shown).toBe("string");
          expect(await snapshot(), shown).toEqual(stored);
        }),
        { numRuns: RUNS },
      );
    });
  }
});
