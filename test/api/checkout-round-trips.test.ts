import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { card, checkout, createForm } from "../support/checkout.js";
import { recordPgQueries, withoutTransactions } from "../support/pgQueries.js";
import { dialect, setupTestApp, type TestApp } from "../support/testApp.js";

/**
 * Each statement sent to PostgreSQL is a round trip unless it is written behind one still waiting for its
 * answer (a transaction's `begin` goes out with its first statement, its `commit` with a statement held for
 * it), and on a busy server the round trips are most of a checkout's cost. These pin how many a completed
 * checkout takes, so that a change adding one is a decision, not an accident.
 */
describe.skipIf(dialect !== "postgres")("round trips of a checkout on PostgreSQL", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await setupTestApp({ env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0" } });
  });
  afterAll(async () => {
    await t.close();
  });

  async function counted(
    formId: string,
    email: string,
    beside?: () => Promise<unknown>,
  ): Promise<{ text: string; roundTrip: boolean }[]> {
    // Rows of the API requests before it (making the form) are written first, not during the checkout.
    await t.deps.metrics.flush();
    const recording = recordPgQueries();
    const alongside = beside?.();
    const res = await checkout(t, formId, {
      amount: 25,
      frequency: "ONE_TIME",
      donor: { firstName: "Ada", lastName: "Donor", email },
      paymentMethod: card(),
    }).finally(async () => {
      await alongside;
      recording.stop();
    });
    expect(res.status).toBe(201);
    // The API metrics' flush runs on a timer, in a transaction of its own: not the checkout's.
    const sent = withoutTransactions(recording.sent, (s) => /^\s*insert into api_metrics\b/i.test(s));
    // Reads of the cached records (form, organization) happen only while the change feed's listening
    // connection is not up yet (a busy machine), and the feed's own queries are on a connection of its
    // own: neither is the checkout's.
    return sent
      .filter(
        (q) =>
          !/^\s*select \* from "(forms|organizations)"|pg_notify|^\s*listen\b|current_schema/i.test(q.text),
      )
      .map((q) => ({ text: q.text, roundTrip: q.roundTrip }));
  }
  const texts = (sent: { text: string }[]) => sent.map((q) => q.text);

  it("a returning donor's card gift: four round trips, begin and commit each written with a statement", async () => {
    const formId = await createForm(t, { title: "Round trips", funds: ["General"] });
    // The first warm the read caches (form, organization) and make the contact.
    for (let i = 0; i < 3; i++) await counted(formId, "returning@example.org");
    const sent = await counted(formId, "returning@example.org");
    expect(
      sent.map((q) => `${q.roundTrip ? "" : "+"}${q.text.trim().split(/\s+/)[0].toLowerCase()}`),
    ).toEqual([
      "insert", // the PROCESSING payment, counting the card's declines in the same statement (no stock: no transaction)
      "insert", // the sandbox processor's ledger entry for the charge
      "begin",
      "+update", // the outcome, with the donor's contact found by the same statement, sent with the begin
      "with", // the webhook event, the receipt and the webhooks' deliveries, one statement held for the commit
      "+commit",
    ]);
    expect(sent.filter((q) => q.roundTrip)).toHaveLength(4);
    // The status is a literal, so that the count reads the partial index of declines (FAILED rows only).
    expect(sent[0].text).toMatch(/"status" = 'FAILED'/);
  });

  it("the outcome's update does not read the payment's status first", async () => {
    const formId = await createForm(t, { title: "Round trips 2", funds: ["General"] });
    for (let i = 0; i < 3; i++) await counted(formId, "again@example.org");
    const statements = texts(await counted(formId, "again@example.org"));
    expect(statements.filter((s) => /^\s*select\b.*\bfrom "payments" where "id"/i.test(s))).toEqual([]);
  });

  it("the API metrics' flush running beside a checkout is not counted as the checkout's", async () => {
    const formId = await createForm(t, { title: "Round trips 3", funds: ["General"] });
    for (let i = 0; i < 3; i++) await counted(formId, "beside@example.org");
    const flushed = async () => {
      await t.request("GET", "/v1/forms"); // one API request: one metrics row to flush
      await t.deps.metrics.flush();
    };
    const statements = texts(await counted(formId, "beside@example.org", flushed));
    expect(statements.filter((s) => /^\s*(begin|commit)\b/i.test(s))).toEqual(["begin", "commit"]);
    expect(statements.some((s) => /api_metrics/i.test(s))).toBe(false);
  });

  it("runs the checkout's data statements as prepared statements, each parsed once per connection", async () => {
    const formId = await createForm(t, { title: "Round trips 4", funds: ["General"] });
    for (let i = 0; i < 3; i++) await counted(formId, "prepared@example.org");
    const recording = recordPgQueries();
    const res = await checkout(t, formId, {
      amount: 25,
      frequency: "ONE_TIME",
      donor: { firstName: "Ada", lastName: "Donor", email: "prepared@example.org" },
      paymentMethod: card(),
    }).finally(recording.stop);
    expect(res.status).toBe(201);
    const data = recording.sent.filter((q) => /^\s*(select|insert|update|with)\b/i.test(q.text));
    expect(data.length).toBeGreaterThanOrEqual(4);
    for (const q of data) expect(q.name, q.text).toMatch(/^almoner_\d+$/);
    // One name per text, whichever connection runs it.
    const byName = new Map(data.map((q) => [q.name, q.text]));
    for (const q of data) expect(byName.get(q.name)).toBe(q.text);
    expect(recording.sent.filter((q) => /^\s*(begin|commit)\b/i.test(q.text)).every((q) => !q.name)).toBe(
      true,
    );
  });
});
