import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * GET /v1/forms/{id} answers with the pipeline's headers written in one go (server/api/middleware.ts,
 * `answer`) rather than added by each middleware: over HTTP, through the Node adapter as in production,
 * every answer of it, errors included, must still carry X-Request-Id, nosniff, HSTS and X-RateLimit-*, count
 * against the key's budget and be recorded for api-metrics like any other route's.
 */

interface Served {
  t: TestApp;
  server: Server;
  base: string;
}

async function serve(env: Record<string, string> = {}): Promise<Served> {
  const t = await setupTestApp({ env });
  const server = createServer(getRequestListener(t.app.fetch));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { t, server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function close(s: Served): Promise<void> {
  await new Promise((resolve) => s.server.close(resolve));
  await s.t.close();
}

async function get(s: Served, path: string, key: string | null, headers: Record<string, string> = {}) {
  const res = await fetch(`${s.base}${path}`, {
    headers: key ? { Authorization: `Bearer ${key}`, ...headers } : headers,
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function newForm(t: TestApp, body: Record<string, unknown> = validForms.standard()): Promise<string> {
  const res = await t.request<{ formID: string }>("POST", "/v1/forms", { body });
  expect(res.status, res.text).toBe(201);
  return res.body.formID;
}

describe(`GET /v1/forms/{id} through the one pipeline, over HTTP (${dialect})`, () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve({ RATE_LIMIT_PER_HOUR: "100000", PUBLIC_URL: "https://give.example.org" });
  });
  afterAll(() => close(s));

  it("carries the pipeline's headers and the body's own, the same on every read", async () => {
    const id = await newForm(s.t);
    const fromApp = await s.t.request("GET", `/v1/forms/${id}`);
    for (let i = 0; i < 3; i++) {
      const res = await get(s, `/v1/forms/${id}`, s.t.org.key, { "X-Request-Id": `trace-${i}` });
      expect(res.status).toBe(200);
      expect(res.text).toBe(fromApp.text);
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(Number(res.headers.get("content-length"))).toBe(Buffer.byteLength(res.text));
      expect(res.headers.get("x-request-id")).toBe(`trace-${i}`);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("strict-transport-security")).toMatch(/^max-age=\d{7,}/);
      expect(res.headers.get("x-ratelimit-limit")).toBe("100000");
      expect(res.headers.get("x-ratelimit-reset")).toMatch(/^\d+$/);
    }
    const fresh = await get(s, `/v1/forms/${id}`, s.t.org.key);
    expect(fresh.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("counts down one by one, alternating with another route", async () => {
    const id = await newForm(s.t);
    const seen: number[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await get(s, i % 2 ? "/v1/organization" : `/v1/forms/${id}`, s.t.org.key);
      expect(res.status).toBe(200);
      seen.push(Number(res.headers.get("x-ratelimit-remaining")));
    }
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBe(seen[i - 1] - 1);
  });

  it("gives its errors the same headers: 404, 403, 410 and 401", async () => {
    const id = await newForm(s.t);
    const stranger = await s.t.newOrg();
    const gone = await newForm(s.t);
    expect((await s.t.request("DELETE", `/v1/forms/${gone}`)).status).toBe(200);
    const answers = [
      [await get(s, "/v1/forms/00000000-0000-4000-8000-000000000000", s.t.org.key), 404],
      [await get(s, `/v1/forms/${id}`, stranger.key), 403],
      [await get(s, `/v1/forms/${gone}`, s.t.org.key), 410],
    ] as const;
    for (const [res, status] of answers) {
      expect(res.status).toBe(status);
      expect(res.headers.get("x-request-id")).toBeTruthy();
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("strict-transport-security")).toBeTruthy();
      expect(res.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/);
    }
    const unauthorized = await get(s, `/v1/forms/${id}`, null);
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get("x-request-id")).toBeTruthy();
    expect(unauthorized.headers.get("x-content-type-options")).toBe("nosniff");
    expect(unauthorized.headers.get("x-ratelimit-limit")).toBeNull();
  });

  it("answers a form with tickets with its sales figures", async () => {
    const id = await newForm(s.t, validForms.event());
    const res = await get(s, `/v1/forms/${id}`, s.t.org.key);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).tickets[0]).toHaveProperty("quantitySold", 0);
    expect(res.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("shows an update and a deletion at the next read", async () => {
    const id = await newForm(s.t);
    for (let i = 0; i < 3; i++) expect((await get(s, `/v1/forms/${id}`, s.t.org.key)).status).toBe(200);
    const put = await s.t.request("PUT", `/v1/forms/${id}`, { body: { title: "Renamed while cached" } });
    expect(put.status, put.text).toBe(200);
    await s.t.store.changes.settled();
    expect(JSON.parse((await get(s, `/v1/forms/${id}`, s.t.org.key)).text).title).toBe(
      "Renamed while cached",
    );
    expect((await s.t.request("DELETE", `/v1/forms/${id}`)).status).toBe(200);
    await s.t.store.changes.settled();
    for (let i = 0; i < 3; i++) {
      const gone = await get(s, `/v1/forms/${id}`, s.t.org.key);
      expect(gone.status).toBe(410);
      expect(JSON.parse(gone.text)).toEqual({ error: "Form has been deleted" });
    }
  });

  it("records every read for api-metrics", async () => {
    const id = await newForm(s.t);
    const count = async () => {
      await s.t.deps.metrics.flush();
      const rows = await s.t.store.db
        .selectFrom("api_metrics")
        .select("id")
        .where("endpoint", "=", `/v1/forms/${id}`)
        .execute();
      return rows.length;
    };
    const before = await count();
    for (let i = 0; i < 5; i++) expect((await get(s, `/v1/forms/${id}`, s.t.org.key)).status).toBe(200);
    expect(await count()).toBe(before + 5);
  });
});

describe(`GET /v1/forms/{id} past the rate limit (${dialect})`, () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve({ RATE_LIMIT_PER_HOUR: "3" });
  });
  afterAll(() => close(s));

  it("answers 429 with X-RateLimit-*, Retry-After and the request id", async () => {
    const id = await newForm(s.t);
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof get>> | undefined;
    for (let i = 0; i < 4; i++) {
      last = await get(s, `/v1/forms/${id}`, s.t.org.key, { "X-Request-Id": "over-the-limit" });
      statuses.push(last.status);
    }
    expect(statuses.at(-1)).toBe(429);
    expect(last?.headers.get("x-ratelimit-limit")).toBe("3");
    expect(last?.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(last?.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(last?.headers.get("x-request-id")).toBe("over-the-limit");
    expect(last?.headers.get("x-content-type-options")).toBe("nosniff");
  });
});
