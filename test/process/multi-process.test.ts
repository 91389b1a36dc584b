import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../server/store/database.js";
import { createApiKey } from "../../server/store/keys.js";
import { createOrganization } from "../../server/store/organizations.js";
import {
  databaseUrlOf,
  killAll,
  type ServerProcess,
  startServer,
  type TempDir,
  tempDir,
} from "../support/processes.js";
import { dialect, pgUrl, validForms } from "../support/testApp.js";

/**
 * Two server processes on one PostgreSQL schema: whatever one process counts, stores or pages through,
 * the other must see. Each test uses its own organization (and so its own keys and forms).
 */

interface FormList {
  forms: { formID: string; title: string }[];
  count: number;
  hasMore: boolean;
  lastEvaluatedKey?: string;
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

describe.skipIf(dialect !== "postgres")("two server processes on one PostgreSQL schema", () => {
  const schema = `almoner_mp_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  let schemaCreated = false;
  let temp: TempDir;
  let url: string;
  /** Both at RATE_LIMIT_PER_HOUR=20. */
  let limited: [ServerProcess, ServerProcess];
  /** Both at the default budget, for the tests that need more than 20 requests. */
  let roomy: [ServerProcess, ServerProcess];

  async function newKey(name: string): Promise<string> {
    const store = await openStore(url);
    try {
      const org = await createOrganization(store.db, { name }, Date.now());
      return (await createApiKey(store.db, { organizationId: org.id, sandbox: false }, Date.now())).key;
    } finally {
      await store.close();
    }
  }

  beforeAll(async () => {
    temp = tempDir();
    await adminQuery(`create schema ${schema}`);
    schemaCreated = true;
    url = databaseUrlOf({ url: pgUrl, pgSchema: schema });
    // Migrate and create an organization first, so that no process seeds the demo.
    await newKey("Setup Org");
    const base = { DATA_DIR: temp.dir, DATABASE_URL: url, PUBLIC_URL: "https://give.example.org" };
    const started = await Promise.all([
      startServer({ ...base, RATE_LIMIT_PER_HOUR: "20" }),
      startServer({ ...base, RATE_LIMIT_PER_HOUR: "20" }),
      startServer(base),
      startServer(base),
    ]);
    limited = [started[0], started[1]];
    roomy = [started[2], started[3]];
    for (const s of started) expect(s.stdout()).not.toMatch(/API key/);
  });

  afterAll(async () => {
    await Promise.all([...(limited ?? []), ...(roomy ?? [])].map((s) => s.stop()));
    await killAll();
    if (schemaCreated) await adminQuery(`drop schema if exists ${schema} cascade`);
    temp?.remove();
  });

  it("the processes are distinct and both healthy", async () => {
    const ports = new Set([...limited, ...roomy].map((s) => s.port));
    expect(ports.size).toBe(4);
    for (const s of [...limited, ...roomy])
      expect((await s.json("GET", "/health")).body).toEqual({ status: "ok" });
  });

  it("shares the rate-limit budget: 20 requests alternating succeed, the 21st is 429 on either", async () => {
    const key = await newKey("Rate Org");
    for (let i = 0; i < 20; i++) {
      const server = limited[i % 2];
      const res = await server.json("GET", "/v1/forms", { key });
      expect(res.status, `request ${i + 1} on process ${i % 2 ? "B" : "A"}`).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBe("20");
      expect(res.headers.get("x-ratelimit-remaining")).toBe(String(19 - i));
    }
    for (const [name, server] of [
      ["A", limited[0]],
      ["B", limited[1]],
    ] as const) {
      const res = await server.json("GET", "/v1/forms", { key });
      expect(res.status, `over the limit on process ${name}`).toBe(429);
      expect(res.body).toEqual({ error: "Rate limit exceeded" });
      expect(res.headers.get("x-ratelimit-limit")).toBe("20");
      expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
      const retryAfter = Number(res.headers.get("retry-after"));
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(3600);
    }
    // Another key of another organization is not affected.
    const other = await newKey("Other Rate Org");
    expect((await limited[1].json("GET", "/v1/forms", { key: other })).status).toBe(200);
  });

  it("shares the rate-limit budget under concurrent requests to both processes", async () => {
    const key = await newKey("Concurrent Rate Org");
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) => limited[i % 2].json("GET", "/v1/forms", { key })),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
  });

  it("replays an Idempotency-Key POST sent to process A when it is repeated to process B", async () => {
    const key = await newKey("Idempotency Org");
    const [a, b] = limited;
    const body = validForms.givingLevel();
    const headers = { "Idempotency-Key": `idem-${Math.random().toString(36).slice(2)}` };
    const first = await a.json<{ formID: string }>("POST", "/v1/forms", { key, body, headers });
    expect(first.status).toBe(201);
    const replay = await b.json<{ formID: string }>("POST", "/v1/forms", { key, body, headers });
    expect(replay.status).toBe(first.status);
    expect(replay.body.formID).toBe(first.body.formID);
    expect(replay.body).toEqual(first.body);
    // A replay is still a response like any other.
    expect(replay.headers.get("x-request-id")).toBeTruthy();
    expect(replay.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
    expect(replay.headers.get("x-ratelimit-limit")).toBe("20");
    expect(replay.headers.get("x-ratelimit-remaining")).toBe("18");

    const listed = await b.json<FormList>("GET", "/v1/forms", { key });
    expect(listed.status).toBe(200);
    expect(listed.body.count).toBe(1);
    expect(listed.body.forms.map((f) => f.formID)).toEqual([first.body.formID]);

    // The same key with another body, on either process: 422.
    const mismatch = await a.json("POST", "/v1/forms", { key, body: validForms.standard(), headers });
    expect(mismatch.status).toBe(422);
    expect(mismatch.body).toEqual({ error: "Idempotency-Key reused with a different request" });
  });

  it("creates one form when the same Idempotency-Key reaches both processes at once", async () => {
    const key = await newKey("Racing Idempotency Org");
    const body = validForms.event();
    const headers = { "Idempotency-Key": `race-${Math.random().toString(36).slice(2)}` };
    const [ra, rb] = await Promise.all(
      roomy.map((s) =>
        s.json<{ formID?: string; error?: string }>("POST", "/v1/forms", { key, body, headers }),
      ),
    );
    for (const r of [ra, rb]) expect([201, 409]).toContain(r.status);
    const winners = [ra, rb].filter((r) => r.status === 201);
    expect(winners.length).toBeGreaterThan(0);
    expect(new Set(winners.map((r) => r.body.formID)).size).toBe(1);

    // A later retry on either process replays the stored answer.
    const retry = await roomy[1].json<{ formID: string }>("POST", "/v1/forms", { key, body, headers });
    expect(retry.status).toBe(201);
    expect(retry.body.formID).toBe(winners[0].body.formID);

    const listed = await roomy[0].json<FormList>("GET", "/v1/forms", { key });
    expect(listed.body.count).toBe(1);
    expect(listed.body.forms[0].formID).toBe(winners[0].body.formID);
  });

  it("pages through 60 forms with limit=7, alternating processes and creating forms between pages", async () => {
    const key = await newKey("Paging Org");
    const original: string[] = [];
    for (let batch = 0; batch < 6; batch++) {
      const created = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          roomy[(batch * 10 + i) % 2].json<{ formID: string }>("POST", "/v1/forms", {
            key,
            body: { title: `Original ${batch * 10 + i}`, funds: ["General"] },
          }),
        ),
      );
      for (const r of created) {
        expect(r.status).toBe(201);
        original.push(r.body.formID);
      }
    }
    expect(new Set(original).size).toBe(60);

    const seen: string[] = [];
    const added: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const server = roomy[pages % 2];
      const query = cursor ? `?limit=7&lastEvaluatedKey=${encodeURIComponent(cursor)}` : "?limit=7";
      const page = await server.json<FormList>("GET", `/v1/forms${query}`, { key });
      expect(page.status, `page ${pages + 1}`).toBe(200);
      expect(page.body.forms.length).toBeLessThanOrEqual(7);
      expect(page.body.count).toBe(page.body.forms.length);
      if (page.body.hasMore) {
        expect(page.body.forms).toHaveLength(7);
        expect(page.body.lastEvaluatedKey).toBeTypeOf("string");
      } else {
        expect(page.body).not.toHaveProperty("lastEvaluatedKey");
      }
      seen.push(...page.body.forms.map((f) => f.formID));
      cursor = page.body.hasMore ? page.body.lastEvaluatedKey : undefined;
      pages++;

      // New forms arrive between pages, on the other process.
      const extra = await roomy[pages % 2].json<{ formID: string }>("POST", "/v1/forms", {
        key,
        body: { title: `Added ${pages}`, funds: ["General"] },
      });
      expect(extra.status).toBe(201);
      added.push(extra.body.formID);
    } while (cursor && pages < 50);

    expect(cursor).toBeUndefined();
    // Every original form exactly once; nothing repeated.
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of original)
      expect(
        seen.filter((s) => s === id),
        id,
      ).toHaveLength(1);
    const knownIds = new Set([...original, ...added]);
    for (const id of seen) expect(knownIds.has(id)).toBe(true);
    expect(pages).toBeGreaterThanOrEqual(Math.ceil(60 / 7));

    const all = await roomy[0].json<FormList>("GET", "/v1/forms?limit=100", { key });
    expect(all.body.count).toBe(60 + added.length);
  });
});
