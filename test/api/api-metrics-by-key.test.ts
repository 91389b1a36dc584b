import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStaffMember } from "../../server/staff/accounts.js";
import { createApiKey } from "../../server/store/keys.js";
import { dialect, setupTestApp, type TestApp, type TestOrg } from "../support/testApp.js";

/**
 * `GET /v1/analytics/api-metrics` is the log of the calling key's requests: an API key sees its own only,
 * and asking for another key's (`keyId`) is a 403; a staff session (the dashboard) sees every key of the
 * organization, and `keyId` narrows it to one. Each filter pages on its own, each row once, and its cursor
 * is refused by a list of another filter.
 */

const ORIGIN = "http://forms.test";
const PASSWORD = "correct horse battery staple";
const UNKNOWN_UUID = "7d3b2a6e-5c1f-4e8a-9b0d-2f4e6a8c0b1d";
const UNKNOWN_KEY_ID = "key_01jz0000000000000000000000";

interface Metric {
  metricId: string;
  endpoint: string;
  method: string;
  statusCode: number;
  keyId: string;
}

interface MetricListBody {
  metrics: Metric[];
  count: number;
  hasMore: boolean;
  lastEvaluatedKey?: string;
}

interface ErrorBody {
  error: string;
  details?: string[];
}

type Caller = { key: string | null; headers?: Record<string, string> };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let t: TestApp;

beforeAll(async () => {
  t = await setupTestApp();
});
afterAll(() => t.close());

/** An organization with two keys of every permission: `a` and `b`. */
async function twoKeys(): Promise<{ a: TestOrg; b: TestOrg }> {
  const a = await t.newOrg();
  const { key, record } = await createApiKey(
    t.store.db,
    { organizationId: a.id, sandbox: false },
    Date.now(),
  );
  return { a, b: { id: a.id, key, keyId: record.keyId } };
}

/** A FINANCE member of the organization (who may read analytics), signed in: their user id and requests' options. */
async function staff(organizationId: string, email: string): Promise<{ userId: string; caller: Caller }> {
  const made = await createStaffMember(t.store, {
    organizationId,
    email,
    role: "FINANCE",
    publicUrl: t.config.publicUrl,
    nowMs: Date.now(),
  });
  const setup = await t.request("POST", "/api/staff/setup", {
    key: null,
    body: { token: new URL(made.setupUrl).searchParams.get("token"), password: PASSWORD },
    headers: { Origin: ORIGIN },
  });
  expect(setup.status, setup.text).toBe(200);
  const cookie = (setup.headers.get("Set-Cookie") ?? "").split(";")[0];
  return { userId: made.userId, caller: { key: null, headers: { Cookie: cookie, Origin: ORIGIN } } };
}

/** A request that must answer `status`, a little apart from the one before (one millisecond each). */
async function call(caller: Caller, method: string, path: string, status: number): Promise<void> {
  const res = await t.request(method, path, caller);
  expect(res.status, `${method} ${path}: ${res.text}`).toBe(status);
  await sleep(3);
}

function metrics(caller: Caller, query = "") {
  return t.request<MetricListBody>("GET", `/v1/analytics/api-metrics${query}`, caller);
}

/** The list's rows as [keyId, method, endpoint, statusCode], newest first (one page, asserted complete). */
async function rows(caller: Caller, query = ""): Promise<[string, string, string, number][]> {
  const res = await metrics(caller, query);
  expect(res.status, res.text).toBe(200);
  expect(res.body.hasMore).toBe(false);
  expect(res.body.count).toBe(res.body.metrics.length);
  return res.body.metrics.map((m) => [m.keyId, m.method, m.endpoint, m.statusCode]);
}

/** Every metricId of a list, walked `limit` at a time: the ids and each page's count. */
async function walk(caller: Caller, query: string, limit: number) {
  const ids: string[] = [];
  const counts: number[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 20; page++) {
    const after = cursor ? `&lastEvaluatedKey=${encodeURIComponent(cursor)}` : "";
    const res = await metrics(caller, `?limit=${limit}${query}${after}`);
    expect(res.status, res.text).toBe(200);
    counts.push(res.body.count);
    ids.push(...res.body.metrics.map((m) => m.metricId));
    if (!res.body.hasMore) break;
    cursor = res.body.lastEvaluatedKey;
  }
  return { ids, counts };
}

const LIST = "/v1/analytics/api-metrics";

describe(`API metrics of one key (${dialect})`, () => {
  it("gives each API key its own requests only, and a staff session every key's, narrowed by keyId", async () => {
    const { a, b } = await twoKeys();
    const keyA = { key: a.key };
    const keyB = { key: b.key };
    await call(keyA, "GET", "/v1/forms", 200);
    await call(keyB, "GET", "/v1/organization", 200);
    await call(keyA, "GET", `/v1/forms/${UNKNOWN_UUID}`, 404);
    await call(keyB, "GET", "/v1/forms?limit=1", 200);
    await call(keyB, "DELETE", `/v1/forms/${UNKNOWN_UUID}`, 404);
    // Another organization's key: never in this organization's lists.
    await call({ key: (await t.newOrg()).key }, "GET", "/v1/forms", 200);

    expect(await rows(keyA)).toEqual([
      [a.keyId, "GET", `/v1/forms/${UNKNOWN_UUID}`, 404],
      [a.keyId, "GET", "/v1/forms", 200],
    ]);
    await sleep(3);
    expect(await rows(keyB)).toEqual([
      [b.keyId, "DELETE", `/v1/forms/${UNKNOWN_UUID}`, 404],
      [b.keyId, "GET", "/v1/forms", 200],
      [b.keyId, "GET", "/v1/organization", 200],
    ]);
    await sleep(3);
    // A key may name itself: the same list.
    expect(await rows(keyA, `?keyId=${a.keyId}`)).toEqual([
      [a.keyId, "GET", LIST, 200],
      [a.keyId, "GET", `/v1/forms/${UNKNOWN_UUID}`, 404],
      [a.keyId, "GET", "/v1/forms", 200],
    ]);
    await sleep(3);

    const person = await staff(a.id, "finance@example.org");
    expect(await rows(person.caller)).toEqual([
      [a.keyId, "GET", LIST, 200],
      [b.keyId, "GET", LIST, 200],
      [a.keyId, "GET", LIST, 200],
      [b.keyId, "DELETE", `/v1/forms/${UNKNOWN_UUID}`, 404],
      [b.keyId, "GET", "/v1/forms", 200],
      [a.keyId, "GET", `/v1/forms/${UNKNOWN_UUID}`, 404],
      [b.keyId, "GET", "/v1/organization", 200],
      [a.keyId, "GET", "/v1/forms", 200],
    ]);
    await sleep(3);
    expect(await rows(person.caller, `?keyId=${b.keyId}`)).toEqual([
      [b.keyId, "GET", LIST, 200],
      [b.keyId, "DELETE", `/v1/forms/${UNKNOWN_UUID}`, 404],
      [b.keyId, "GET", "/v1/forms", 200],
      [b.keyId, "GET", "/v1/organization", 200],
    ]);
    await sleep(3);
    // The session's own requests carry the person's id, which narrows the list as a key's does.
    expect(await rows(person.caller, `?keyId=${person.userId}`)).toEqual([
      [person.userId, "GET", LIST, 200],
      [person.userId, "GET", LIST, 200],
    ]);
    // An empty keyId is no filter.
    expect((await rows(person.caller, "?keyId=")).length).toBe(11);
  });

  it("refuses an API key another key's requests with 403, and a keyId that is no id with 400", async () => {
    const { a, b } = await twoKeys();
    await call({ key: b.key }, "GET", "/v1/organization", 200);
    const other = await t.newOrg();

    for (const keyId of [b.keyId, other.keyId, UNKNOWN_KEY_ID]) {
      const res = await t.request<ErrorBody>("GET", `${LIST}?keyId=${keyId}`, { key: a.key });
      expect(res.status, res.text).toBe(403);
      expect(res.body.error).toMatch(/only its own requests/);
    }
    for (const keyId of ["nope", "key_", `${b.keyId}x`, b.keyId.toUpperCase()]) {
      const res = await t.request<ErrorBody>("GET", `${LIST}?keyId=${encodeURIComponent(keyId)}`, {
        key: a.key,
      });
      expect(res.status, res.text).toBe(400);
      expect(
        res.body.details?.some((d) => d.includes("keyId")),
        res.text,
      ).toBe(true);
    }
    // An empty one is no filter: the key's own list.
    const own = await rows({ key: a.key }, "?keyId=");
    expect(own.every(([keyId]) => keyId === a.keyId)).toBe(true);
  });

  it("gives a staff session an empty list for a key id its organization's requests do not carry", async () => {
    const { a } = await twoKeys();
    await call({ key: a.key }, "GET", "/v1/forms", 200);
    const other = await t.newOrg();
    await call({ key: other.key }, "GET", "/v1/forms", 200);
    const person = await staff(a.id, "finance2@example.org");
    expect(await rows(person.caller, `?keyId=${other.keyId}`)).toEqual([]);
    expect(await rows(person.caller, `?keyId=${UNKNOWN_KEY_ID}`)).toEqual([]);
    const bad = await t.request<ErrorBody>("GET", `${LIST}?keyId=pay_1`, person.caller);
    expect(bad.status, bad.text).toBe(400);
  });

  it("pages through one key's requests among another key's, each of its rows once", async () => {
    const { a, b } = await twoKeys();
    for (let i = 0; i < 7; i++) {
      await call({ key: a.key }, "GET", `/v1/forms?limit=${i + 1}`, 200);
      await call({ key: b.key }, "GET", "/v1/organization", 200);
      if (i % 2 === 0) await call({ key: b.key }, "GET", "/v1/forms", 200);
    }
    await t.deps.metrics.flush();
    const stored = async (keyId: string) =>
      (
        await t.store.db
          .selectFrom("api_metrics")
          .select("id")
          .where("key_id", "=", keyId)
          .orderBy("created_at", "desc")
          .orderBy("id", "desc")
          .execute()
      ).map((r) => r.id);
    const ofA = await stored(a.keyId);
    expect(ofA).toHaveLength(7);

    const walked = await walk({ key: a.key }, "", 2);
    expect(walked.counts).toEqual([2, 2, 2, 1]);
    expect(walked.ids).toEqual(ofA);

    const person = await staff(a.id, "finance3@example.org");
    const ofB = await stored(b.keyId);
    expect(ofB).toHaveLength(11);
    const byStaff = await walk(person.caller, `&keyId=${b.keyId}`, 3);
    expect(byStaff.counts).toEqual([3, 3, 3, 2]);
    expect(byStaff.ids).toEqual(ofB);
  });

  it("takes a cursor only in the list that gave it", async () => {
    const { a, b } = await twoKeys();
    for (let i = 0; i < 3; i++) {
      await call({ key: a.key }, "GET", "/v1/forms", 200);
      await call({ key: b.key }, "GET", "/v1/forms", 200);
    }
    const person = await staff(a.id, "finance4@example.org");
    const cursorOf = async (caller: Caller, query: string) => {
      const res = await metrics(caller, `?limit=1${query}`);
      expect(res.status, res.text).toBe(200);
      expect(res.body.hasMore).toBe(true);
      return encodeURIComponent(res.body.lastEvaluatedKey as string);
    };
    const status = async (caller: Caller, query: string) => (await metrics(caller, query)).status;

    const ofKeyA = await cursorOf({ key: a.key }, "");
    const ofAll = await cursorOf(person.caller, "");
    const ofKeyB = await cursorOf(person.caller, `&keyId=${b.keyId}`);

    // Every key's list refuses one key's cursor, and the reverse.
    expect(await status(person.caller, `?lastEvaluatedKey=${ofKeyA}`)).toBe(400);
    expect(await status({ key: a.key }, `?lastEvaluatedKey=${ofAll}`)).toBe(400);
    expect(await status(person.caller, `?keyId=${a.keyId}&lastEvaluatedKey=${ofAll}`)).toBe(400);
    // One key's cursor is refused by another key's list.
    expect(await status({ key: a.key }, `?lastEvaluatedKey=${ofKeyB}`)).toBe(400);
    expect(await status(person.caller, `?keyId=${a.keyId}&lastEvaluatedKey=${ofKeyB}`)).toBe(400);
    // The same list, whoever reads it: key A's own requests.
    expect(await status(person.caller, `?keyId=${a.keyId}&lastEvaluatedKey=${ofKeyA}`)).toBe(200);
    expect(await status(person.caller, `?lastEvaluatedKey=${ofAll}`)).toBe(200);
  });
});
