import crypto from "node:crypto";
import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recurringForm, subscribe } from "../billing/support.js";
import { countForms, dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * What every /v1 request goes through, as a client meets it: Idempotency-Key replays the
 * answer of a request that ran (a refusal by validation keeps nothing, as at Stripe), the body-size limit answers after the key is checked, pagination reports
 * every bad parameter at once, and a route whose body fields are all optional takes no body at all.
 */

type Json = Record<string, unknown>;
interface ErrorBody {
  error: string;
  details?: string[];
}

let t: TestApp;
beforeAll(async () => {
  t = await setupTestApp({ env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0" } });
});
afterAll(() => t.close());

const formCount = (orgId: string) => countForms(t.store.db, orgId);

describe(`Idempotency-Key keeps the answers of requests that ran, not refusals (${dialect})`, () => {
  it("keeps nothing for a request refused by validation: the same key with a corrected body creates the form", async () => {
    const org = await t.newOrg();
    const headers = { "Idempotency-Key": "bad-body-1" };
    const first = await t.request<ErrorBody>("POST", "/v1/forms", {
      key: org.key,
      headers,
      body: { title: "" },
    });
    expect(first.status).toBe(400);
    const again = await t.request<ErrorBody>("POST", "/v1/forms", {
      key: org.key,
      headers,
      body: { title: "" },
    });
    expect(again.status).toBe(400);
    expect(again.headers.get("Idempotent-Replayed")).toBeNull();
    const form = validForms.standard();
    const fixed = await t.request("POST", "/v1/forms", { key: org.key, headers, body: form });
    expect(fixed.status).toBe(201);
    expect(await formCount(org.id)).toBe(1);
    const retried = await t.request("POST", "/v1/forms", { key: org.key, headers, body: form });
    expect(retried.status).toBe(201);
    expect(retried.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await formCount(org.id)).toBe(1);
  });

  it("replays the first answer to the same body sent with its keys in another order and other spacing", async () => {
    const org = await t.newOrg();
    const headers = { "Idempotency-Key": "reordered-1" };
    const first = await t.request<{ formID: string }>("POST", "/v1/forms", {
      key: org.key,
      headers,
      rawBody: '{"title":"Reordered","funds":["General"],"goal":null}',
    });
    expect(first.status).toBe(201);
    const again = await t.request<{ formID: string }>("POST", "/v1/forms", {
      key: org.key,
      headers,
      rawBody: '{ "goal": null, "funds": [ "General" ], "title": "Reordered" }',
    });
    expect(again.status, again.text).toBe(201);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.body.formID).toBe(first.body.formID);
    expect(await formCount(org.id)).toBe(1);
  });

  it("replays a key stored with the body's keys in the order sent (before they were sorted), and still refuses another body", async () => {
    const org = await t.newOrg();
    const headers = { "Idempotency-Key": "stored-as-sent-1" };
    const rawBody = '{"title":"Stored as sent","funds":["General"]}';
    const first = await t.request<{ formID: string }>("POST", "/v1/forms", {
      key: org.key,
      headers,
      rawBody,
    });
    expect(first.status).toBe(201);
    // The fingerprint as versions before the sorting stored it: the parsed body with its keys as sent.
    const asSent = crypto
      .createHash("sha256")
      .update(`post /v1/forms\n${JSON.stringify(JSON.parse(rawBody))}`)
      .digest("hex");
    await t.store.db
      .updateTable("idempotency_keys")
      .set({ request_hash: asSent })
      .where("organization_id", "=", org.id)
      .where("idem_key", "=", "stored-as-sent-1")
      .execute();
    const again = await t.request<{ formID: string }>("POST", "/v1/forms", {
      key: org.key,
      headers,
      rawBody,
    });
    expect(again.status, again.text).toBe(201);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.body.formID).toBe(first.body.formID);
    const other = await t.request<ErrorBody>("POST", "/v1/forms", {
      key: org.key,
      headers,
      rawBody: '{"title":"Another","funds":["General"]}',
    });
    expect(other.status).toBe(422);
    expect(await formCount(org.id)).toBe(1);
  });

  it("keeps nothing for an Invalid JSON body: the same key then runs the corrected request", async () => {
    const org = await t.newOrg();
    const headers = { "Idempotency-Key": "garbled-json" };
    const first = await t.request<ErrorBody>("POST", "/v1/forms", {
      key: org.key,
      headers,
      rawBody: '{"title":',
    });
    expect(first.status).toBe(400);
    expect(first.body).toEqual({ error: "Invalid JSON body" });
    const fixed = await t.request("POST", "/v1/forms", {
      key: org.key,
      headers,
      body: validForms.standard(),
    });
    expect(fixed.status).toBe(201);
    expect(await formCount(org.id)).toBe(1);
  });

  it("stores no row for refused requests, however many keys and unknown fields are sent", async () => {
    const org = await t.newOrg();
    const junk = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`junk${i}`, i]));
    for (let i = 0; i < 5; i++) {
      const res = await t.request<ErrorBody>("POST", "/v1/forms", {
        key: org.key,
        headers: { "Idempotency-Key": `junk-${i}` },
        body: { ...validForms.standard(), ...junk },
      });
      expect(res.status).toBe(400);
    }
    const kept = await t.store.db
      .selectFrom("idempotency_keys")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("organization_id", "=", org.id)
      .executeTakeFirstOrThrow();
    expect(Number(kept.n)).toBe(0);
  });

  it("answers 422, not a validation error, when a used key comes back with an invalid body", async () => {
    const org = await t.newOrg();
    const headers = { "Idempotency-Key": "used-once" };
    const made = await t.request("POST", "/v1/forms", { key: org.key, headers, body: validForms.standard() });
    expect(made.status).toBe(201);
    const reused = await t.request<ErrorBody>("POST", "/v1/forms", {
      key: org.key,
      headers,
      body: { title: 5 },
    });
    expect(reused.status).toBe(422);
  });

  it("answers 422 when a used key comes back with a body that is not JSON", async () => {
    const org = await t.newOrg();
    const headers = { "Idempotency-Key": "used-then-garbled" };
    expect(
      (await t.request("POST", "/v1/forms", { key: org.key, headers, body: validForms.standard() })).status,
    ).toBe(201);
    const garbled = await t.request("POST", "/v1/forms", { key: org.key, headers, rawBody: "not json" });
    expect(garbled.status).toBe(422);
  });

  it("replays a 409 duplicate title instead of creating the form once the title is free", async () => {
    const org = await t.newOrg();
    const body = { ...validForms.standard(), title: "Spring appeal" };
    const original = await t.request<Json>("POST", "/v1/forms", { key: org.key, body });
    expect(original.status).toBe(201);
    const headers = { "Idempotency-Key": "dup-title" };
    expect((await t.request("POST", "/v1/forms", { key: org.key, headers, body })).status).toBe(409);
    const formId = (original.body.form as Json | undefined)?.formID ?? original.body.formID;
    expect((await t.request("DELETE", `/v1/forms/${String(formId)}`, { key: org.key })).status).toBe(200);
    const retry = await t.request("POST", "/v1/forms", { key: org.key, headers, body });
    expect(retry.status).toBe(409);
    expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
  });
});

describe(`an Idempotency-Key on a request whose answer holds a secret (${dialect})`, () => {
  /** The kept answers of the organization's Idempotency-Keys, as stored. */
  const keptAnswers = async (orgId: string) =>
    (
      await t.store.db
        .selectFrom("idempotency_keys")
        .select("response_body")
        .where("organization_id", "=", orgId)
        .execute()
    ).map((r) => String(r.response_body));

  it("replays a new API key's answer, secret included, and makes no second key; the record holds it sealed", async () => {
    const org = await t.newOrg();
    const headers = { "Idempotency-Key": "new-key-1" };
    const body = { name: "CRM sync", permissions: ["forms:read"] };
    const first = await t.request<Json>("POST", "/v1/keys", { key: org.key, headers, body });
    expect(first.status, first.text).toBe(201);
    expect(first.headers.get("Cache-Control")).toBe("no-store");
    const again = await t.request<Json>("POST", "/v1/keys", { key: org.key, headers, body });
    expect(again.status).toBe(201);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    const keys = await t.request<{ keys: Json[] }>("GET", "/v1/keys", { key: org.key });
    expect(keys.body.keys.filter((k) => k.name === "CRM sync")).toHaveLength(1);
    const stored = await keptAnswers(org.id);
    expect(stored).toHaveLength(1);
    expect(stored[0]).not.toContain(String(first.body.key));
  });

  it("replays a webhook's rotated secret: a retried rotation rotates once, and the secret it answered still signs", async () => {
    const org = await t.newOrg();
    const hook = await t.request<Json>("POST", "/v1/webhooks", {
      key: org.key,
      body: { url: "https://example.org/hooks", events: ["form.created"] },
    });
    expect(hook.status, hook.text).toBe(201);
    // The registration's answer holds the signing secret: no cache on the way keeps it, first time too.
    expect(hook.headers.get("Cache-Control")).toBe("no-store");
    const path = `/v1/webhooks/${String(hook.body.webhookId)}/rotate-secret`;
    const headers = { "Idempotency-Key": "rotate-1" };
    const first = await t.request<Json>("POST", path, { key: org.key, headers });
    expect(first.status, first.text).toBe(200);
    const again = await t.request<Json>("POST", path, { key: org.key, headers });
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.body.secret).toBe(first.body.secret);
    const row = await t.store.db
      .selectFrom("webhooks")
      .select(["previous_secret"])
      .where("organization_id", "=", org.id)
      .executeTakeFirstOrThrow();
    // Rotated once: the registration's secret is the one still accepted beside the new one.
    expect(row.previous_secret).toBe(hook.body.secret);
    for (const kept of await keptAnswers(org.id)) expect(kept).not.toContain(String(first.body.secret));
  });

  it("replays a payment-method update link without keeping its token in the clear", async () => {
    const sub = await subscribe(t, await recurringForm(t));
    const path = `/v1/subscriptions/${sub.id}/payment-method-update-link`;
    const headers = { "Idempotency-Key": "update-link-1" };
    const first = await t.request<Json>("POST", path, { headers, body: { expiresInMinutes: 1440 } });
    expect(first.status, first.text).toBe(201);
    expect(first.headers.get("Cache-Control")).toBe("no-store");
    const again = await t.request<Json>("POST", path, { headers, body: { expiresInMinutes: 1440 } });
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.body.url).toBe(first.body.url);
    const token = String(first.body.url).split("/").pop() ?? "";
    expect(token.length).toBeGreaterThan(20);
    for (const kept of await keptAnswers(t.org.id)) expect(kept).not.toContain(token);
  });
});

describe(`an Idempotency-Key on a request whose answer holds a secret, without SECRETS_KEY in production (${dialect})`, () => {
  it("runs a retry never again: a second webhook is not made; the replay says the answer is not kept", async () => {
    const prod = await setupTestApp({
      env: { NODE_ENV: "production", SECRETS_KEY: undefined as unknown as string },
    });
    try {
      const headers = { "Idempotency-Key": "register-hook-1" };
      const body = { url: "https://example.org/hook", events: ["donation.created"] };
      const first = await prod.request<Json>("POST", "/v1/webhooks", { headers, body });
      expect(first.status, first.text).toBe(201);
      expect(String(first.body.secret)).toMatch(/^whsec_/);
      const again = await prod.request<Json>("POST", "/v1/webhooks", { headers, body });
      expect(again.status).toBe(409);
      expect(again.headers.get("Idempotent-Replayed")).toBe("true");
      expect(String(again.body.error)).toMatch(/already ran/);
      const list = await prod.request<{ count: number }>("GET", "/v1/webhooks");
      expect(list.body.count).toBe(1);
    } finally {
      await prod.close();
    }
  });
});

describe(`request body size limit (${dialect})`, () => {
  const huge = JSON.stringify({ title: "x".repeat(400_000), funds: ["General"] });

  it("answers 401 to an over-size body without a key: the key is checked first", async () => {
    const res = await t.request<ErrorBody>("POST", "/v1/forms", { key: null, rawBody: huge });
    expect(res.status).toBe(401);
  });

  it("answers 413 with the rate-limit headers to an over-size body with a key", async () => {
    const res = await t.request<ErrorBody>("POST", "/v1/forms", { rawBody: huge });
    expect(res.status).toBe(413);
    expect(res.body.error).toMatch(/^Request body too large/);
    expect(res.headers.get("X-RateLimit-Limit")).toBeTruthy();
    expect(res.headers.get("X-RateLimit-Remaining")).toBeTruthy();
  });
});

describe(`pagination parameters (${dialect})`, () => {
  it("reports a bad limit and a garbled cursor together", async () => {
    for (const list of ["forms", "payments", "contacts", "subscriptions"]) {
      const res = await t.request<ErrorBody>("GET", `/v1/${list}?limit=0&lastEvaluatedKey=zzz`);
      expect(res.status, list).toBe(400);
      expect(res.body.details, list).toEqual([
        "limit must be a whole number from 1 to 100",
        "lastEvaluatedKey is not a cursor returned by this list",
      ]);
    }
  });

  it("reads an empty lastEvaluatedKey as the first page", async () => {
    const res = await t.request<Json>("GET", "/v1/forms?lastEvaluatedKey=");
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body.forms)).toBe(true);
  });
});

describe(`a body holding NUL characters (${dialect})`, () => {
  it("names every NUL character and the body's other problems at once, and creates nothing", async () => {
    const scoped = await t.newOrg();
    const res = await t.request<ErrorBody>("POST", "/v1/forms", {
      key: scoped.key,
      body: { title: "Bad\u0000title", description: "also\u0000bad", color: "blue" },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("Validation failed");
    expect(res.body.details).toEqual(
      expect.arrayContaining([
        "title must not contain the NUL character (\\u0000)",
        "description must not contain the NUL character (\\u0000)",
        "funds is required",
        "color must be a hex color like #3B82F6",
      ]),
    );
    expect(res.body.details).toHaveLength(4);
    expect(await formCount(scoped.id)).toBe(0);
  });
});

describe(`a body whose fields are all optional may be left out (${dialect})`, () => {
  it("creates a payment-method update link from a POST without a body", async () => {
    const sub = await subscribe(t, await recurringForm(t));
    const res = await t.request<Json>("POST", `/v1/subscriptions/${sub.id}/payment-method-update-link`);
    expect(res.status).toBe(201);
    expect(String(res.body.url)).toMatch(/^http:\/\/forms\.test\//);
  });

  it("still refuses a body that is not a JSON object there", async () => {
    const sub = await subscribe(t, await recurringForm(t));
    const res = await t.request<ErrorBody>("POST", `/v1/subscriptions/${sub.id}/payment-method-update-link`, {
      rawBody: "[1]",
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("Invalid JSON body");
  });

  it("still answers Invalid JSON body to an empty POST where fields are required", async () => {
    const res = await t.request<ErrorBody>("POST", "/v1/forms", { rawBody: "" });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("Invalid JSON body");
  });
});

describe(`form fields the specification makes conditional (${dialect})`, () => {
  it("accepts a goal of 0 when the fundraising bar is off, and refuses it when the bar is on", async () => {
    const off = await t.request<Json>("POST", "/v1/forms", {
      body: { ...validForms.standard(), enableFundraisingBar: false, goal: 0 },
    });
    expect(off.status).toBe(201);
    const on = await t.request<ErrorBody>("POST", "/v1/forms", {
      body: { ...validForms.standard(), enableFundraisingBar: true, goal: 0 },
    });
    expect(on.status).toBe(400);
    expect(on.body.details).toEqual([
      "goal is required and must be greater than 0 when enableFundraisingBar is true",
    ]);
  });

  it("reads a null description as an empty one", async () => {
    const res = await t.request<Json>("POST", "/v1/forms", {
      body: { ...validForms.standard(), description: null },
    });
    expect(res.status).toBe(201);
    const id = (res.body.form as Json | undefined)?.formID ?? res.body.formID;
    const got = await t.request<Json>("GET", `/v1/forms/${String(id)}`);
    expect(got.body.description).toBe("");
  });
});

describe(`an Idempotency-Key 24 hours on (${dialect})`, () => {
  it("is forgotten: the same key and body create a second form, and the key then replays that one", async () => {
    let clock = Date.parse("2026-03-01T12:00:00Z");
    const timed = await setupTestApp({ now: () => clock });
    try {
      const headers = { "Idempotency-Key": "day-old" };
      const body = validForms.standard();
      const first = await timed.request<Json>("POST", "/v1/forms", { headers, body });
      expect(first.status).toBe(201);
      clock += 23 * 3600_000;
      const replay = await timed.request<Json>("POST", "/v1/forms", { headers, body });
      expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
      expect(replay.body.formID).toBe(first.body.formID);
      clock += 2 * 3600_000;
      // The first form's title is taken: the new run answers 409, its own outcome, not the old 201.
      const fresh = await timed.request<Json>("POST", "/v1/forms", { headers, body });
      expect(fresh.status).toBe(409);
      expect(fresh.headers.get("Idempotent-Replayed")).toBeNull();
      const kept = await timed.request<Json>("POST", "/v1/forms", { headers, body });
      expect(kept.status).toBe(409);
      expect(kept.headers.get("Idempotent-Replayed")).toBe("true");
    } finally {
      await timed.close();
    }
  });
});

describe(`a body must be Unicode text (${dialect})`, () => {
  const post = (body: BodyInit) =>
    t.app.request("/v1/contacts", {
      method: "POST",
      headers: { Authorization: `Bearer ${t.org.key}`, "Content-Type": "application/json" },
      body,
    });
  const contacts = () =>
    t.store.db.selectFrom("contacts").select("last_name").where("organization_id", "=", t.org.id).execute();

  it("refuses bytes that are not UTF-8 as an Invalid JSON body, instead of storing U+FFFD in their place", async () => {
    const before = (await contacts()).length;
    const bytes = Buffer.concat([
      Buffer.from('{"firstName":"Ada","lastName":"'),
      Buffer.from([0xff]),
      Buffer.from('"}'),
    ]);
    const res = await post(new Uint8Array(bytes));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "Invalid JSON body" });
    expect(await contacts()).toHaveLength(before);
    // The same text in UTF-8 is taken, a byte order mark before it too.
    const ok = await post(
      new Uint8Array(
        Buffer.concat([
          Buffer.from([0xef, 0xbb, 0xbf]),
          Buffer.from('{"firstName":"Ada","lastName":"Løvelace"}'),
        ]),
      ),
    );
    expect(ok.status, await ok.clone().text()).toBe(201);
    expect((await contacts()).map((c) => c.last_name)).toContain("Løvelace");
  });

  it("refuses half of a surrogate pair in a value or a key, naming where; a whole pair is text", async () => {
    const lone = await post('{"firstName":"Ada","lastName":"\\ud800"}');
    expect(lone.status).toBe(400);
    expect(await lone.json()).toEqual({
      error: "Validation failed",
      details: [
        "lastName must be Unicode text: it holds half of a surrogate pair (a \\uD800–\\uDFFF escape without its other half)",
      ],
    });
    const key = await post('{"firstName":"Ada","lastName":"L","customFields":{"\\udc00x":"1"}}');
    expect(key.status).toBe(400);
    expect(((await key.json()) as ErrorBody).details?.[0]).toMatch(
      /^customFields\.\udc00x must be Unicode text/,
    );
    const pair = await post('{"firstName":"Ada","lastName":"L\\ud83d\\ude00"}');
    expect(pair.status).toBe(201);
  });
});

describe(`a body is taken as it is sent (${dialect})`, () => {
  it("refuses a body with a Content-Encoding (gzip) with a 415 that says so, and takes identity", async () => {
    const send = (encoding: string, body: BodyInit) =>
      t.app.request("/v1/contacts", {
        method: "POST",
        headers: {
          Authorization: `Bearer ${t.org.key}`,
          "Content-Type": "application/json",
          "Content-Encoding": encoding,
        },
        body,
      });
    const zipped = await send("gzip", new Uint8Array(zlib.gzipSync('{"firstName":"Zip","lastName":"Ped"}')));
    expect(zipped.status).toBe(415);
    expect(await zipped.json()).toEqual({
      error:
        "The request body must be sent as it is: Content-Encoding gzip is not taken (send no Content-Encoding)",
    });
    const labelled = await send("gzip", '{"firstName":"Zip","lastName":"Ped"}');
    expect(labelled.status).toBe(415);
    const identity = await send("identity", '{"firstName":"Zip","lastName":"Ped"}');
    expect(identity.status).toBe(201);
  });

  it("refuses a body declared in another charset than UTF-8 with a 415 naming it, and takes UTF-8 however it is written", async () => {
    const send = (contentType: string, body: BodyInit) =>
      t.app.request("/v1/contacts", {
        method: "POST",
        headers: { Authorization: `Bearer ${t.org.key}`, "Content-Type": contentType },
        body,
      });
    // "José" in Latin-1: read as UTF-8 it would be a broken byte, so the declared charset is refused first.
    const latin1 = await send(
      "application/json; charset=ISO-8859-1",
      new Uint8Array(Buffer.from('{"firstName":"Jos\u00e9","lastName":"Latin"}', "latin1")),
    );
    expect(latin1.status).toBe(415);
    expect(await latin1.json()).toEqual({
      error:
        "The request body must be UTF-8: Content-Type charset=iso-8859-1 is not taken (send charset=utf-8, or no charset)",
    });
    expect((await send('application/json; charset="utf-16"', "{}")).status).toBe(415);
    for (const [i, type] of [
      "application/json; charset=UTF-8",
      'application/json;charset="utf-8"',
      "application/json; charset=utf8",
      "text/plain;charset=UTF-8",
    ].entries()) {
      const ok = await send(type, JSON.stringify({ firstName: "José", lastName: `Utf${"x".repeat(i + 1)}` }));
      expect(ok.status, type).toBe(201);
      expect(((await ok.json()) as { contact: { firstName: string } }).contact.firstName).toBe("José");
    }
  });
});

describe(`an organization's data is not cached on the way (${dialect})`, () => {
  it("answers every authenticated /v1 request with Cache-Control: no-store, errors included; the public document may be cached", async () => {
    for (const path of ["/v1/contacts", "/v1/payments", "/v1/forms", "/v1/payments/pay_nothing"]) {
      const res = await t.request("GET", path);
      expect(res.headers.get("Cache-Control"), path).toBe("no-store");
    }
    const document = await t.request("GET", "/v1/openapi.json", { key: null });
    expect(document.headers.get("Cache-Control")).toBeNull();
  });
});
