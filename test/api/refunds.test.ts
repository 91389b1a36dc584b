import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createApiKey } from "../../server/store/keys.js";
import { bank, card, checkout, createForm, donor } from "../support/checkout.js";
import { setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/** POST /v1/payments/{id}/refund on the sandbox: full or partial, once, only what can be refunded. */

let t: TestApp;
beforeEach(async () => {
  t = await setupTestApp({ env: { CHECKOUT_LIMIT_PER_IP: "0" } });
});
afterEach(async () => {
  await t.close();
});

async function gift(amount = 50, paymentMethod: Record<string, unknown> = card()): Promise<string> {
  const formId = await createForm(t, validForms.standard());
  const res = await checkout(t, formId, { amount, donor: donor(), paymentMethod });
  return String((res.body.payment as { paymentID: string } | undefined)?.paymentID ?? res.body.paymentID);
}

function refund(id: string, body?: unknown, opts: { key?: string; headers?: Record<string, string> } = {}) {
  return t.request<Record<string, unknown>>("POST", `/v1/payments/${id}/refund`, {
    ...(body === undefined ? {} : { body }),
    ...opts,
  });
}

async function updates(id: string) {
  const rows = await t.store.db
    .selectFrom("outbox_events")
    .select("type")
    .where("subject_id", "=", id)
    .where("type", "=", "donation.updated")
    .execute();
  return rows.length;
}

describe("refunding a payment", () => {
  it("refunds all that is left without a body: REFUNDED, donation.updated, and the sandbox knows", async () => {
    const id = await gift(50);
    const res = await refund(id);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      message: "Payment refunded in full",
      refund: { amount: 50, status: "succeeded" },
      payment: { paymentID: id, status: "REFUNDED", refundedAmount: 50 },
    });
    expect(await updates(id)).toBe(1);
    const row = await t.store.db
      .selectFrom("payments")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    const lookup = await t.deps.processors.sandbox.retrievePayment(row.processor_payment_id ?? "");
    expect(lookup?.refundedCents).toBe(5000);
  });

  it("refunds part, then the rest, then answers 409", async () => {
    const id = await gift(50);
    const part = await refund(id, { amount: 12.5, reason: "Duplicate gift" });
    expect(part.body).toMatchObject({ payment: { status: "COMPLETED", refundedAmount: 12.5 } });
    const rest = await refund(id, {});
    expect(rest.body).toMatchObject({ refund: { amount: 37.5 }, payment: { status: "REFUNDED" } });
    const again = await refund(id);
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: "This payment is already fully refunded" });
  });

  it("counts two partial refunds made at the same moment, both of them, every time", async () => {
    const ids: string[] = [];
    for (let round = 0; round < 30; round++) {
      const id = await gift(100);
      ids.push(id);
      await Promise.all([refund(id, { amount: 30 }), refund(id, { amount: 70 })]);
    }
    for (const id of ids) {
      const row = await t.store.db
        .selectFrom("payments")
        .selectAll()
        .where("id", "=", id)
        .executeTakeFirstOrThrow();
      const atProcessor = await t.deps.processors.sandbox.retrievePayment(row.processor_payment_id ?? "");
      expect(atProcessor?.refundedCents).toBe(10000);
      expect([row.status, Number(row.refunded_cents)]).toEqual(["REFUNDED", 10000]);
    }
  });

  it("identical refunds asked at once make one refund, audited once, and the others' answers say so", async () => {
    const id = await gift(50);
    // "At once": every request has read the payment before any reaches the processor (as a double click's
    // do while the first waits on Stripe). Without this the sandbox, which answers at once, could finish
    // and record the first before a later one reads it: a new state, and rightly a second refund.
    const sandbox = t.deps.processors.sandbox;
    const sandboxRefund = sandbox.refund;
    let arrived = 0;
    let allArrived = () => {};
    const together = new Promise<void>((resolve) => {
      allArrived = resolve;
    });
    sandbox.refund = async (input) => {
      if (++arrived === 6) allArrived();
      await Promise.race([together, new Promise((resolve) => setTimeout(resolve, 3000))]);
      return sandboxRefund.call(sandbox, input);
    };
    const answers = await Promise.all(Array.from({ length: 6 }, () => refund(id, { amount: 20 }))).finally(
      () => {
        sandbox.refund = sandboxRefund;
      },
    );
    expect(arrived).toBe(6);
    const made = answers.filter((a) => a.status === 200);
    expect(made.length).toBeGreaterThan(0);
    const refundIds = new Set(made.map((a) => (a.body.refund as { id: string }).id));
    expect(refundIds.size).toBe(1);
    // One answer made the refund; the others say that they made none, as a replay is marked.
    const fresh = made.filter((a) => a.headers.get("Idempotent-Replayed") === null);
    expect(fresh.map((a) => a.body.message)).toEqual(["Payment refunded in part"]);
    for (const again of made.filter((a) => a !== fresh[0])) {
      expect(again.headers.get("Idempotent-Replayed")).toBe("true");
      expect(again.body.message).toMatch(/^No refund was made now: an identical request .* made refund re_/);
    }
    const row = await t.store.db
      .selectFrom("payments")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    expect(Number(row.refunded_cents)).toBe(2000);
    const audited = await t.store.db
      .selectFrom("audit_log")
      .select("new_values")
      .where("subject_id", "=", id)
      .where("action", "=", "payment.refunded")
      .execute();
    expect(audited.map((a) => JSON.parse(a.new_values).refundId)).toEqual([...refundIds]);
  });

  it("a refund made at the processor is recorded through passing write conflicts, never answered 'nothing changed'", async () => {
    const id = await gift(50);
    // Write conflicts armed once the processor has made the refund: they meet its recording.
    const transact = t.store.transact;
    const sandbox = t.deps.processors.sandbox;
    const sandboxRefund = sandbox.refund;
    const conflicts = (times: number) => {
      sandbox.refund = async (input) => {
        const made = await sandboxRefund.call(sandbox, input);
        let left = times;
        t.store.transact = (work) => {
          if (left-- > 0)
            return Promise.reject(Object.assign(new Error("could not serialize"), { code: "40001" }));
          return transact(work);
        };
        return made;
      };
    };
    const processorRefunded = async () => {
      const row = await t.store.db
        .selectFrom("payments")
        .selectAll()
        .where("id", "=", id)
        .executeTakeFirstOrThrow();
      return (await t.deps.processors.sandbox.retrievePayment(row.processor_payment_id ?? ""))?.refundedCents;
    };
    try {
      conflicts(2);
      const res = await refund(id, { amount: 20 });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ payment: { refundedAmount: 20 } });
      expect(await processorRefunded()).toBe(2000);

      // Conflicts that do not pass: the answer says the refund was made, and not to ask again.
      conflicts(100);
      const stuck = await refund(id, { amount: 10 });
      expect(stuck.status, stuck.text).toBe(503);
      expect(String(stuck.body.error)).toContain("was made at the payment processor");
      expect(String(stuck.body.error)).toContain("Do not ask for it again");
      expect(await processorRefunded()).toBe(3000);
    } finally {
      t.store.transact = transact;
      sandbox.refund = sandboxRefund;
    }
  });

  it("refuses more than is left with a 400 that says how much is left", async () => {
    const id = await gift(50);
    await refund(id, { amount: 40 });
    const res = await refund(id, { amount: 20 });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: "Validation failed", details: [expect.stringContaining("$10")] });
  });

  it("refuses bad amounts and unknown fields with every problem listed", async () => {
    const id = await gift(50);
    for (const body of [
      { amount: 0 },
      { amount: 1e-9 },
      { amount: -5 },
      { amount: 1.234 },
      { amount: "5" },
      { amont: 5 },
    ]) {
      const res = await refund(id, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.details).toBeInstanceOf(Array);
    }
    // A hair above zero is zero cents: refused as zero is, before the processor is asked.
    const tiny = await refund(id, { amount: 1e-9 });
    expect(tiny.body.details).toEqual([expect.stringMatching(/^amount must be greater than 0 /)]);
    expect((await refund(id, { amount: 1 })).status).toBe(200);
  });

  it("answers 409 for a declined payment and a bank payment that has not cleared", async () => {
    const formId = await createForm(t, validForms.standard());
    const declined = await checkout(t, formId, {
      amount: 50,
      donor: donor(),
      paymentMethod: card("4000000000000002"),
    });
    expect((await refund(String(declined.body.paymentID))).status).toBe(409);
    const pending = await gift(50, bank());
    const res = await refund(pending);
    expect(res.status).toBe(409);
    expect(String(res.body.error)).toContain("not cleared yet");
  });

  it("refunds once for a retried request with the same Idempotency-Key", async () => {
    const id = await gift(50);
    const first = await refund(id, { amount: 10 }, { headers: { "Idempotency-Key": "refund-1" } });
    const second = await refund(id, { amount: 10 }, { headers: { "Idempotency-Key": "refund-1" } });
    expect(second.headers.get("Idempotent-Replayed")).toBe("true");
    expect(second.body).toEqual(first.body);
    const row = await t.store.db
      .selectFrom("payments")
      .select("refunded_cents")
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    expect(Number(row.refunded_cents)).toBe(1000);
  });

  it("needs donations:write, and never reaches another organization's payment", async () => {
    const id = await gift(50);
    const reader = await createApiKey(
      t.store.db,
      {
        organizationId: t.org.id,
        sandbox: false,
        permissions: ["donations:read"],
      },
      Date.now(),
    );
    const mine = await t.request("POST", `/v1/payments/${id}/refund`, { key: reader.key });
    expect(mine.status).toBe(403);
    expect(mine.body).toEqual({ error: "Missing permission: donations:write" });
    const other = await t.newOrg();
    const theirs = await t.request("POST", `/v1/payments/${id}/refund`, { key: other.key });
    expect(theirs.status).toBe(403);
    const unknown = await refund("pay_00000000000000000000000000");
    expect(unknown.status).toBe(404);
    const row = await t.store.db
      .selectFrom("payments")
      .select("refunded_cents")
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    expect(Number(row.refunded_cents)).toBe(0);
  });

  it("gives a fully refunded event order's tickets back", async () => {
    const formId = await createForm(t, {
      ...validForms.event(),
      tickets: [{ name: "Adult", price: 50, quantity: 1 }],
    });
    const seat = { tickets: [{ name: "Adult", quantity: 1 }] };
    const bought = await checkout(t, formId, { ...seat, donor: donor(), paymentMethod: card() });
    expect((await checkout(t, formId, { ...seat, donor: donor(), paymentMethod: card() })).status).toBe(400);
    await refund(String((bought.body.payment as { paymentID: string }).paymentID));
    expect((await checkout(t, formId, { ...seat, donor: donor(), paymentMethod: card() })).status).toBe(201);
  });
});

describe("cancelling a free registration (an order that cost nothing)", () => {
  async function register(formId: string): Promise<{ status: number; paymentID: string }> {
    const res = await checkout(t, formId, { tickets: [{ name: "Free", quantity: 2 }], donor: donor() });
    return {
      status: res.status,
      paymentID: String((res.body.payment as { paymentID?: string } | undefined)?.paymentID),
    };
  }

  it("cancels it through the refund: REFUNDED, refund null, tickets void, places given back, audited once", async () => {
    const formId = await createForm(t, {
      ...validForms.event(),
      tickets: [{ name: "Free", price: 0, quantity: 2 }],
    });
    const first = await register(formId);
    expect(first.status).toBe(201);
    expect((await register(formId)).status).toBe(400); // both places taken
    const giftsOf = async () =>
      (await t.request<{ forms: { gifts: number }[] }>("GET", `/v1/analytics/forms?formIDs=${formId}`)).body
        .forms[0].gifts;
    expect(await giftsOf()).toBe(1);

    const res = await refund(first.paymentID, { reason: "Cannot come after all" });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      message: "Free order cancelled: its tickets are void and its places given back",
      refund: null,
      payment: { paymentID: first.paymentID, status: "REFUNDED", amount: 0, refundedAmount: 0 },
    });
    const tickets = await t.store.db
      .selectFrom("tickets")
      .select("voided_at")
      .where("payment_id", "=", first.paymentID)
      .execute();
    expect(tickets).toHaveLength(2);
    expect(tickets.every((ticket) => ticket.voided_at !== null)).toBe(true);
    // A cancelled registration is no gift: the form's count (the dashboard's) leaves it out.
    expect(await giftsOf()).toBe(0);
    expect(await updates(first.paymentID)).toBe(1);
    const audited = await t.store.db
      .selectFrom("audit_log")
      .select("new_values")
      .where("subject_id", "=", first.paymentID)
      .where("action", "=", "payment.refunded")
      .execute();
    expect(audited.map((a) => JSON.parse(a.new_values))).toEqual([
      expect.objectContaining({ status: "REFUNDED", refundId: null, reason: "Cannot come after all" }),
    ]);

    // The places are free again; a second cancel is refused and changes nothing.
    expect((await register(formId)).status).toBe(201);
    const again = await refund(first.paymentID);
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: "This free order is already cancelled" });
    expect(await updates(first.paymentID)).toBe(1);
  });

  it("refuses an amount for a free order with a 400 and leaves it as it was", async () => {
    const formId = await createForm(t, { ...validForms.event(), tickets: [{ name: "Free", price: 0 }] });
    const order = await register(formId);
    const res = await refund(order.paymentID, { amount: 5 });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain("nothing was charged for this free order");
    const row = await t.store.db
      .selectFrom("payments")
      .select("status")
      .where("id", "=", order.paymentID)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe("COMPLETED");
    expect(await updates(order.paymentID)).toBe(0);
  });

  it("two cancels at once: one cancels, the other is a 409, the places are given back once", async () => {
    const formId = await createForm(t, {
      ...validForms.event(),
      tickets: [{ name: "Free", price: 0, quantity: 4 }],
    });
    const order = await register(formId);
    const answers = await Promise.all([refund(order.paymentID), refund(order.paymentID)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const form = await t.request<{ tickets: { quantitySold: number }[] }>("GET", `/v1/forms/${formId}`);
    expect(form.body.tickets[0].quantitySold).toBe(0);
    expect(await updates(order.paymentID)).toBe(1);
  });
});
