import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createForm } from "../support/checkout.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/** The webhooks API (registration, listing, update, deletion, the delivery log), and the forms API's form events. */

type Json = Record<string, unknown>;

describe(`webhooks API (${dialect})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await setupTestApp();
  });
  afterAll(() => t.close());

  const create = (body: unknown, key?: string) => t.request<Json>("POST", "/v1/webhooks", { body, key });

  it("registers a webhook: 201 with the record, an ACTIVE status and the secret shown once", async () => {
    const res = await create({
      url: "https://example.org/hooks",
      events: ["donation.created", "contact.created"],
      description: "CRM sync",
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      webhookId: expect.stringMatching(/^wh_[0-9a-z]{26}$/),
      url: "https://example.org/hooks",
      events: ["donation.created", "contact.created"],
      status: "ACTIVE",
      description: "CRM sync",
      createdAt: expect.any(Number),
      lastDeliveryAt: null,
      successCount: 0,
      failureCount: 0,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      message: expect.stringMatching(/only once/),
    });
    expect(Math.abs((res.body.createdAt as number) - Date.now() / 1000)).toBeLessThan(60);
    expect(Buffer.from((res.body.secret as string).slice(6), "base64")).toHaveLength(32);

    const id = res.body.webhookId as string;
    const read = await t.request("GET", `/v1/webhooks/${id}`);
    expect(read.status).toBe(200);
    const { secret: _secret, message: _message, ...record } = res.body;
    expect(read.body).toEqual(record);
    expect(read.text).not.toContain("whsec_");

    const list = await t.request<{ webhooks: Json[]; count: number }>("GET", "/v1/webhooks");
    expect(list.status).toBe(200);
    expect(list.body.webhooks).toContainEqual(record);
    expect(list.body.count).toBe(list.body.webhooks.length);
    expect(list.text).not.toContain("whsec_");
  });

  it("two registrations get different secrets; an omitted description is an empty string", async () => {
    const a = await create({ url: "https://a.example.org/x", events: ["form.created"] });
    const b = await create({ url: "https://a.example.org/x", events: ["form.created"] });
    expect(a.body.secret).not.toBe(b.body.secret);
    expect(a.body.description).toBe("");
  });

  it("PUT changes only the fields sent, replaces events whole, keeps the secret and never returns it", async () => {
    const made = await create({ url: "https://example.org/a", events: ["form.created", "form.updated"] });
    const id = made.body.webhookId as string;
    const before = await t.store.db
      .selectFrom("webhooks")
      .select("secret")
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    const res = await t.request<{ message: string; webhook: Json }>("PUT", `/v1/webhooks/${id}`, {
      body: { events: ["contact.updated"] },
    });
    expect(res.status).toBe(200);
    expect(res.body.message).toBe("Webhook updated successfully");
    expect(res.body.webhook).toMatchObject({
      url: "https://example.org/a",
      events: ["contact.updated"],
      status: "ACTIVE",
    });
    expect(res.text).not.toContain("whsec_");
    const desc = await t.request<{ webhook: Json }>("PUT", `/v1/webhooks/${id}`, {
      body: { description: "d" },
    });
    expect(desc.body.webhook).toMatchObject({ events: ["contact.updated"], description: "d" });
    const off = await t.request<{ webhook: Json }>("PUT", `/v1/webhooks/${id}`, {
      body: { status: "DISABLED", url: "https://example.org/b" },
    });
    expect(off.body.webhook).toMatchObject({ status: "DISABLED", url: "https://example.org/b" });
    const listed = await t.request<{ webhooks: Json[] }>("GET", "/v1/webhooks");
    expect(listed.body.webhooks.find((w) => w.webhookId === id)).toMatchObject({ status: "DISABLED" });
    const after = await t.store.db
      .selectFrom("webhooks")
      .select("secret")
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    expect(after.secret).toBe(before.secret);
  });

  it("PUT accepts and ignores the read-only fields a read returns, so a read can be sent back with a change", async () => {
    const made = await create({ url: "https://example.org/echo", events: ["form.created"] });
    const id = made.body.webhookId as string;
    const read = await t.request<Json>("GET", `/v1/webhooks/${id}`);
    const copied = await t.request<{ webhook: Json }>("PUT", `/v1/webhooks/${id}`, {
      body: { ...read.body, description: "from a read" },
    });
    expect(copied.status).toBe(200);
    expect(copied.body.webhook).toEqual({ ...read.body, description: "from a read" });

    const forged = await t.request<{ webhook: Json }>("PUT", `/v1/webhooks/${id}`, {
      body: {
        webhookId: "wh_x",
        description: "d",
        createdAt: 1,
        updatedAt: "2020-01-01T00:00:00Z",
        lastDeliveryAt: 2,
        successCount: 99,
        failureCount: 98,
      },
    });
    expect(forged.status).toBe(200);
    expect(forged.body.webhook).toEqual({ ...read.body, description: "d" });
    expect((await t.request<Json>("GET", `/v1/webhooks/${id}`)).body).toEqual({
      ...read.body,
      description: "d",
    });

    const onlyReadOnly = await t.request<Json>("PUT", `/v1/webhooks/${id}`, {
      body: { webhookId: id, successCount: 0 },
    });
    expect(onlyReadOnly.status).toBe(400);
    expect(onlyReadOnly.body.details).toEqual([
      "body must contain at least one of url, events, status, description",
    ]);
    for (const [extra, detail] of [
      [{ secret: "whsec_mine" }, "secret is not a recognised field"],
      [{ foo: 1 }, "foo is not a recognised field"],
    ] as const) {
      const res = await t.request<Json>("PUT", `/v1/webhooks/${id}`, {
        body: { ...read.body, description: "x", ...extra },
      });
      expect(res.status, detail).toBe(400);
      expect(res.body.details).toEqual([detail]);
    }
  });

  it("refuses a bad URL, unknown or empty events, unknown fields, and a PUT without a valid field (400 with details)", async () => {
    const bad: [unknown, RegExp][] = [
      // A development server takes http too, and says so.
      [{ url: "not a url", events: ["form.created"] }, /^url must be an absolute http or https URL$/],
      [
        { url: "ftp://example.org/x", events: ["form.created"] },
        /^url must be an absolute http or https URL$/,
      ],
      [{ url: "https://user:pw@example.org/x", events: ["form.created"] }, /^url /],
      [{ events: ["form.created"] }, /^url is required/],
      [{ url: "https://example.org/x", events: [] }, /^events must contain at least 1/],
      [{ url: "https://example.org/x", events: ["donation.deleted"] }, /^events\[0\] must be one of/],
      [{ url: "https://example.org/x" }, /^events is required/],
      [{ url: "https://example.org/x", events: "form.created" }, /^events must be an array/],
      [
        { url: "https://example.org/x", events: ["form.created"], secret: "mine" },
        /^secret is not a recognised field/,
      ],
    ];
    for (const [body, detail] of bad) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toBe("Validation failed");
      expect(res.body.details, JSON.stringify(body)).toEqual(
        expect.arrayContaining([expect.stringMatching(detail)]),
      );
    }
    const made = await create({ url: "https://example.org/x", events: ["form.created"] });
    const id = made.body.webhookId as string;
    for (const body of [{}, { status: "DELETED" }, { events: [] }, { url: "nope" }, { foo: 1 }]) {
      const res = await t.request<Json>("PUT", `/v1/webhooks/${id}`, { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const empty = await t.request<Json>("PUT", `/v1/webhooks/${id}`, { body: {} });
    expect(empty.body.details).toEqual([
      "body must contain at least one of url, events, status, description",
    ]);
    const unchanged = await t.request<Json>("GET", `/v1/webhooks/${id}`);
    expect(unchanged.body).toMatchObject({
      url: "https://example.org/x",
      events: ["form.created"],
      status: "ACTIVE",
    });
  });

  it("another merchant's webhook is a 403, an unknown id a 404, a deleted one a 410", async () => {
    const other = await t.newOrg({ name: "Other" });
    const theirs = await create({ url: "https://other.example.org/x", events: ["form.created"] }, other.key);
    const id = theirs.body.webhookId as string;
    for (const [method, body] of [
      ["GET", undefined],
      ["PUT", { status: "DISABLED" }],
      ["DELETE", undefined],
    ] as const) {
      const res = await t.request(method, `/v1/webhooks/${id}`, { body });
      expect(res.status, method).toBe(403);
    }
    expect((await t.request<Json>("GET", `/v1/webhooks/${id}`, { key: other.key })).body.status).toBe(
      "ACTIVE",
    );
    const mine = await t.request<{ webhooks: Json[] }>("GET", "/v1/webhooks");
    expect(mine.body.webhooks.map((w) => w.webhookId)).not.toContain(id);
    const logs = await t.request("GET", `/v1/analytics/webhook-logs?webhookId=${id}`);
    expect(logs.status).toBe(403);

    expect((await t.request("GET", "/v1/webhooks/wh_00000000000000000000000000")).status).toBe(404);
    expect((await t.request("GET", "/v1/webhooks/not-an-id")).status).toBe(404);
    expect((await t.request("DELETE", "/v1/webhooks/wh_00000000000000000000000000")).status).toBe(404);

    const made = await create({ url: "https://example.org/gone", events: ["form.created"] });
    const gone = made.body.webhookId as string;
    const del = await t.request("DELETE", `/v1/webhooks/${gone}`);
    expect(del.body).toEqual({ message: "Webhook deleted successfully", webhookId: gone, status: "DELETED" });
    const again = await t.request<Json>("DELETE", `/v1/webhooks/${gone}`);
    expect(again.status).toBe(410);
    expect(again.body.error).toBe("Webhook has already been deleted");
    expect((await t.request("GET", `/v1/webhooks/${gone}`)).status).toBe(410);
    expect((await t.request("PUT", `/v1/webhooks/${gone}`, { body: { status: "ACTIVE" } })).status).toBe(410);
    const list = await t.request<{ webhooks: Json[] }>("GET", "/v1/webhooks");
    expect(list.body.webhooks.map((w) => w.webhookId)).not.toContain(gone);
  });

  it("needs webhooks:read to read, webhooks:write to change, analytics:read for the delivery log", async () => {
    const reader = await t.newOrg({ permissions: ["webhooks:read"] });
    const writer = await t.newOrg({ permissions: ["webhooks:write"] });
    const denied = await create({ url: "https://example.org/x", events: ["form.created"] }, reader.key);
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe("Missing permission: webhooks:write");
    const made = await create({ url: "https://example.org/x", events: ["form.created"] }, writer.key);
    expect(made.status).toBe(201);
    const read = await t.request<Json>("GET", "/v1/webhooks", { key: writer.key });
    expect(read.body.error).toBe("Missing permission: webhooks:read");
    expect((await t.request("GET", "/v1/webhooks", { key: reader.key })).status).toBe(200);
    const logs = await t.request<Json>("GET", "/v1/analytics/webhook-logs", { key: reader.key });
    expect(logs.body.error).toBe("Missing permission: analytics:read");
  });

  it("webhook-logs: an empty page for a new organization, 400 for a bad status, limit or cursor", async () => {
    const fresh = await t.newOrg();
    const res = await t.request("GET", "/v1/analytics/webhook-logs", { key: fresh.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ logs: [], count: 0, hasMore: false });
    for (const q of ["status=DONE", "limit=0", "limit=101", "lastEvaluatedKey=abc"]) {
      const bad = await t.request("GET", `/v1/analytics/webhook-logs?${q}`, { key: fresh.key });
      expect(bad.status, q).toBe(400);
    }
  });

  it("webhook-logs: an empty webhookId is no filter (every webhook's attempts), a real one filters", async () => {
    const org = await t.newOrg();
    const ids: string[] = [];
    for (const url of ["https://example.org/one", "https://example.org/two"]) {
      const made = await create({ url, events: ["form.created"] }, org.key);
      ids.push(made.body.webhookId as string);
    }
    await t.store.db
      .insertInto("webhook_logs")
      .values(
        ids.map((webhookId, i) => ({
          id: `wl_${i}`,
          organization_id: org.id,
          webhook_id: webhookId,
          delivery_id: `wd_${i}`,
          event_id: `evt_${i}`,
          event_type: "form.created",
          status: "SUCCESS",
          http_status: 200,
          response_time_ms: 5,
          attempt: 1,
          error: null,
          created_at: `2026-01-0${i + 1}T00:00:00.000Z`,
        })),
      )
      .execute();
    const get = (q: string) =>
      t.request<{ logs: Json[]; count: number }>("GET", `/v1/analytics/webhook-logs${q}`, { key: org.key });
    const all = await get("");
    expect(all.body.logs.map((l) => l.webhookId)).toEqual([ids[1], ids[0]]);
    for (const q of ["?webhookId=", "?webhookId", "?webhookId=&status=SUCCESS"]) {
      const res = await get(q);
      expect(res.status, q).toBe(200);
      expect(res.body, q).toEqual(all.body);
    }
    const one = await get(`?webhookId=${ids[0]}`);
    expect(one.body.logs.map((l) => l.webhookId)).toEqual([ids[0]]);
    expect((await get("?webhookId=wh_00000000000000000000000000")).status).toBe(404);
  });

  it("the OpenAPI document covers every webhook operation and the delivery log", async () => {
    const res = await t.request<{ paths: Record<string, Record<string, unknown>> }>(
      "GET",
      "/v1/openapi.json",
      {
        key: null,
      },
    );
    const ops = Object.entries(res.body.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(ops).toEqual(
      expect.arrayContaining([
        "POST /v1/webhooks",
        "GET /v1/webhooks",
        "GET /v1/webhooks/{id}",
        "PUT /v1/webhooks/{id}",
        "DELETE /v1/webhooks/{id}",
        "GET /v1/analytics/webhook-logs",
      ]),
    );
  });
});

describe(`form events (${dialect})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await setupTestApp();
  });
  afterAll(() => t.close());

  const events = () =>
    t.store.db.selectFrom("outbox_events").select(["type", "subject_id", "data"]).orderBy("id").execute();

  it("creating and updating a form writes form.created and form.updated with the full form", async () => {
    const formId = await createForm(t, validForms.standard());
    const put = await t.request<{ form: Json }>("PUT", `/v1/forms/${formId}`, {
      body: { description: "New words" },
    });
    expect(put.status).toBe(200);
    const rows = (await events()).filter((e) => e.subject_id === formId);
    expect(rows.map((r) => r.type)).toEqual(["form.created", "form.updated"]);
    expect(JSON.parse(rows[0].data)).toMatchObject({ formID: formId, formUrl: expect.any(String) });
    expect(JSON.parse(rows[1].data)).toEqual(put.body.form);
  });

  it("a refused create or update (duplicate title, validation) writes no event", async () => {
    const body = validForms.standard();
    const formId = await createForm(t, body);
    const before = (await events()).length;
    expect((await t.request("POST", "/v1/forms", { body })).status).toBe(409);
    const other = await createForm(t, validForms.standard());
    const mid = (await events()).length;
    expect(mid).toBe(before + 1);
    expect((await t.request("PUT", `/v1/forms/${other}`, { body: { title: body.title } })).status).toBe(409);
    expect((await t.request("PUT", `/v1/forms/${formId}`, { body: { funds: [] } })).status).toBe(400);
    expect((await events()).length).toBe(mid);
  });
});
