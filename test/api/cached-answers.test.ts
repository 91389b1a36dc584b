import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CachedAnswers, withCachedAnswers } from "../../server/api/cachedAnswers.js";
import { createApiKey, revokeApiKey } from "../../server/store/keys.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * GET /v1/forms/{id} is answered from memory by the server's listener when the key, the form and a
 * rate-limit place are at hand (server/api/cachedAnswers.ts). Whichever way a request goes, the client
 * must see the same thing as from the app itself: these tests send the same requests over HTTP to the
 * listener and compare, and check that every change, error and limit still shows.
 */

let t: TestApp;
let server: Server;
let answers: CachedAnswers;
let base: string;

beforeAll(async () => {
  // A limit far above what the tests use, so that places are leased (a lease is at most 1/32 of it).
  t = await setupTestApp({ env: { RATE_LIMIT_PER_HOUR: "100000" } });
  answers = withCachedAnswers(t.deps, getRequestListener(t.app.fetch));
  server = createServer(answers.listener);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

async function get(path: string, key: string | null = t.org.key, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, {
    headers: key ? { Authorization: `Bearer ${key}`, ...headers } : headers,
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function newForm(body: Record<string, unknown> = validForms.standard()): Promise<string> {
  const res = await t.request<{ formID: string }>("POST", "/v1/forms", { body });
  expect(res.status, res.text).toBe(201);
  return res.body.formID;
}

/** A few requests of `key` through the app, so that it is cached and has leased rate-limit places. */
async function warmKey(key: string): Promise<void> {
  for (let i = 0; i < 3; i++) expect((await get("/v1/organization", key)).status).toBe(200);
}

/** GETs `path` until the listener has answered one of them from memory, at most 50 times. */
async function warm(path: string): Promise<void> {
  // Every write heard of first (on PostgreSQL the notification of the form's own insert comes a moment later).
  await t.store.changes.settled();
  const before = answers.answered();
  for (let i = 0; i < 50 && answers.answered() === before; i++) await get(path);
}

describe(`answers from memory (${dialect})`, () => {
  it("gives the app's own body, status and headers, with a counting-down rate limit", async () => {
    const id = await newForm();
    await warm(`/v1/forms/${id}`);
    const fromApp = await t.request("GET", `/v1/forms/${id}`);
    const before = answers.answered();
    const a = await get(`/v1/forms/${id}`, t.org.key, { "X-Request-Id": "trace-1" });
    const b = await get(`/v1/forms/${id}`);
    expect(answers.answered()).toBe(before + 2);
    for (const res of [a, b]) {
      expect(res.status).toBe(200);
      expect(res.text).toBe(fromApp.text);
      expect(res.headers.get("content-type")).toBe(fromApp.headers.get("content-type"));
      expect(res.headers.get("x-ratelimit-limit")).toBe("100000");
      expect(Number(res.headers.get("x-ratelimit-reset"))).toBe(
        Number(fromApp.headers.get("x-ratelimit-reset")),
      );
      expect(res.headers.get("x-request-id")).toBeTruthy();
    }
    expect(a.headers.get("x-request-id")).toBe("trace-1");
    expect(Number(b.headers.get("x-ratelimit-remaining"))).toBe(
      Number(a.headers.get("x-ratelimit-remaining")) - 1,
    );
  });

  it("records every request for api-metrics, however it was answered", async () => {
    const id = await newForm();
    await warm(`/v1/forms/${id}`);
    const count = async () => {
      await t.deps.metrics.flush();
      const rows = await t.store.db
        .selectFrom("api_metrics")
        .select("id")
        .where("endpoint", "=", `/v1/forms/${id}`)
        .execute();
      return rows.length;
    };
    const before = await count();
    for (let i = 0; i < 5; i++) expect((await get(`/v1/forms/${id}`)).status).toBe(200);
    expect(await count()).toBe(before + 5);
  });

  it("shows an update and a deletion at the next request", async () => {
    const id = await newForm();
    await warm(`/v1/forms/${id}`);
    const put = await t.request("PUT", `/v1/forms/${id}`, { body: { title: "Renamed while cached" } });
    expect(put.status, put.text).toBe(200);
    expect(JSON.parse((await get(`/v1/forms/${id}`)).text).title).toBe("Renamed while cached");
    expect((await t.request("DELETE", `/v1/forms/${id}`)).status).toBe(200);
    // The first read after the change reads the deleted form through the app; later ones find it cached.
    for (let i = 0; i < 3; i++) {
      const gone = await get(`/v1/forms/${id}`);
      expect(gone.status).toBe(410);
      expect(JSON.parse(gone.text)).toEqual({ error: "Form has been deleted" });
    }
  });

  it("leaves every error to the app: another organization, a missing permission, a revoked key", async () => {
    const id = await newForm();
    await warm(`/v1/forms/${id}`);
    const stranger = await t.newOrg();
    await warmKey(stranger.key);
    expect((await get(`/v1/forms/${id}`, stranger.key)).status).toBe(403);
    const writer = await createApiKey(t.store.db, {
      organizationId: t.org.id,
      sandbox: false,
      permissions: ["forms:write", "organization:read"],
    });
    await warmKey(writer.key);
    expect((await get(`/v1/forms/${id}`, writer.key)).status).toBe(403);
    expect((await get(`/v1/forms/${id}`, null)).status).toBe(401);

    const sibling = await t.newOrg();
    const ownForm = await t.request<{ formID: string }>("POST", "/v1/forms", {
      key: sibling.key,
      body: validForms.standard(),
    });
    await warmKey(sibling.key);
    expect((await get(`/v1/forms/${ownForm.body.formID}`, sibling.key)).status).toBe(200);
    expect(await revokeApiKey(t.store.db, sibling.keyId)).toBe(true);
    expect((await get(`/v1/forms/${ownForm.body.formID}`, sibling.key)).status).toBe(401);
  });

  it("answers a form with tickets through the app, with its sales", async () => {
    const id = await newForm(validForms.event());
    const before = answers.answered();
    for (let i = 0; i < 5; i++) {
      const res = await get(`/v1/forms/${id}`);
      expect(res.status).toBe(200);
      expect(JSON.parse(res.text).tickets[0]).toHaveProperty("quantitySold", 0);
    }
    expect(answers.answered()).toBe(before);
  });

  it("counts answers from memory against the limit exactly like the app's", async () => {
    const id = await newForm();
    await warm(`/v1/forms/${id}`);
    const seen: number[] = [];
    for (let i = 0; i < 40; i++) {
      // Every other request goes to the app (another path), the rest may be answered from memory.
      const res = await get(i % 2 ? "/v1/organization" : `/v1/forms/${id}`);
      expect(res.status).toBe(200);
      seen.push(Number(res.headers.get("x-ratelimit-remaining")));
    }
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBe(seen[i - 1] - 1);
  });
});
