import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CARDS, card, checkout, createForm, donor } from "../support/checkout.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/** POST /v1/payments/{id}/receipt: the dashboard's "Send the receipt again". */

let t: TestApp;
let clock = Date.parse("2026-11-26T12:00:00Z");
beforeEach(async () => {
  clock = Date.parse("2026-11-26T12:00:00Z");
  t = await setupTestApp({ env: { CHECKOUT_LIMIT_PER_IP: "0" }, now: () => clock });
});
afterEach(async () => {
  await t.close();
});

async function gift(number: string = CARDS.visa, email?: string): Promise<string> {
  const formId = await createForm(t, validForms.standard());
  const res = await checkout(t, formId, { amount: 25, donor: donor(email), paymentMethod: card(number) });
  return String((res.body.payment as { paymentID: string } | undefined)?.paymentID ?? res.body.paymentID);
}

const receipts = (paymentId: string) =>
  t.store.db
    .selectFrom("email_outbox")
    .select(["to_address", "subject", "text_body"])
    .where("payment_id", "=", paymentId)
    .orderBy("created_at")
    .execute();

const resend = (id: string, key?: string) =>
  t.request<Record<string, unknown>>("POST", `/v1/payments/${id}/receipt`, key === undefined ? {} : { key });

describe(`sending a receipt again (${dialect})`, () => {
  it("queues the same receipt again to the donor, and not twice within a minute", async () => {
    const id = await gift(CARDS.visa, "resend-me@example.org");
    const first = await receipts(id);
    expect(first).toHaveLength(1);
    // The receipt the checkout sent counts: not again within its minute.
    expect((await resend(id)).status).toBe(429);

    clock += 61_000;
    const res = await resend(id);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ to: "resend-me@example.org", emailId: expect.stringMatching(/^eml_/) });
    const after = await receipts(id);
    expect(after).toHaveLength(2);
    expect(after[1]).toEqual(first[0]);

    clock += 30_000;
    const again = await resend(id);
    expect(again.status).toBe(429);
    expect(again.headers.get("retry-after")).toBe("60");
    expect(await receipts(id)).toHaveLength(2);

    clock += 61_000;
    expect((await resend(id)).status).toBe(202);
    expect(await receipts(id)).toHaveLength(3);
  });

  it("makes the receipt afresh with the form's receipt wording of today: a corrected text goes out corrected", async () => {
    const formId = await createForm(t, {
      ...validForms.standard(),
      enableCustomEmail: true,
      replyToAddress: "office@example.org",
      emailSubject: "Thank you",
      customMessage: "Thank you for your gift to the shelter.",
    });
    const res = await checkout(t, formId, {
      amount: 25,
      donor: donor("corrected@example.org"),
      paymentMethod: card(CARDS.visa),
    });
    const id = String(
      (res.body.payment as { paymentID: string } | undefined)?.paymentID ?? res.body.paymentID,
    );
    const patched = await t.request("PATCH", `/v1/forms/${formId}`, {
      body: { customMessage: "Thank you for your gift to the night shelter." },
    });
    expect(patched.status, patched.text).toBe(200);
    clock += 61_000;
    expect((await resend(id)).status).toBe(202);
    const [first, again] = await receipts(id);
    expect(first.text_body).toContain("gift to the shelter.");
    expect(again.text_body).toContain("gift to the night shelter.");
    expect(again.to_address).toBe("corrected@example.org");
  });

  it("queues one receipt for requests made at the same moment (a double click), the others 429", async () => {
    const id = await gift(CARDS.visa, "double-click@example.org");
    clock += 61_000;
    const answers = await Promise.all(Array.from({ length: 4 }, () => resend(id)));
    expect(answers.map((a) => a.status).sort()).toEqual([202, 429, 429, 429]);
    expect(await receipts(id)).toHaveLength(2);
  });

  it("replays its answer to a retry with the same Idempotency-Key, and queues the receipt once", async () => {
    const id = await gift(CARDS.visa, "retry-me@example.org");
    clock += 61_000;
    const headers = { "Idempotency-Key": "resend-1" };
    const first = await t.request("POST", `/v1/payments/${id}/receipt`, { headers });
    expect(first.status, first.text).toBe(202);
    const retry = await t.request("POST", `/v1/payments/${id}/receipt`, { headers });
    expect(retry.status).toBe(202);
    expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
    expect(retry.body).toEqual(first.body);
    expect(await receipts(id)).toHaveLength(2);
  });

  it("refuses a payment that has no receipt: declined, or refunded in full", async () => {
    const declined = await gift(CARDS.declined);
    const res = await resend(declined);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatch(/did not go through/);

    const refunded = await gift();
    expect((await t.request("POST", `/v1/payments/${refunded}/refund`)).status).toBe(200);
    clock += 120_000;
    const gone = await resend(refunded);
    expect(gone.status).toBe(409);
    expect(gone.body.error).toMatch(/refunded in full/);
  });

  it("reaches only the caller's own payments, with a key that may write donations", async () => {
    const id = await gift();
    const other = await t.newOrg();
    expect((await resend(id, other.key)).status).toBe(403);
    const reader = await t.newOrg({ permissions: ["donations:read"] });
    expect((await resend(id, reader.key)).status).toBe(403);
    expect((await resend("pay_nothing")).status).toBe(404);
    expect((await receipts(id)).length).toBe(1);
  });
});
