import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { card, createForm, donor } from "../support/checkout.js";
import { setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * Attacks on the public checkout's origin and idempotency rules: a site of the attacker's posting with a
 * forged Host, the same Idempotency-Key under another spelling of the form id, and a replayed answer
 * fetched from another site.
 */

let t: TestApp;
beforeEach(async () => {
  t = await setupTestApp({ env: { CHECKOUT_LIMIT_PER_IP: "0" } });
});
afterEach(async () => {
  await t.close();
});

function post(formId: string, headers: Record<string, string>, body: unknown) {
  return t.request<Record<string, unknown>>("POST", `/api/forms/${formId}/checkout`, {
    key: null,
    body,
    headers,
  });
}

async function paymentCount(): Promise<number> {
  return (await t.store.db.selectFrom("payments").select("id").execute()).length;
}

describe("the checkout's Origin check", () => {
  it("refuses another site even when it sends a Host header of its own (PUBLIC_URL decides)", async () => {
    const formId = await createForm(t, validForms.standard());
    const res = await t.app.request(`http://evil.example/api/forms/${formId}/checkout`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: "http://evil.example", Host: "evil.example" },
      body: JSON.stringify({ amount: 25, donor: donor(), paymentMethod: card() }),
    });
    expect(res.status).toBe(403);
    expect(await paymentCount()).toBe(0);
  });

  it("accepts the instance's own pages", async () => {
    const formId = await createForm(t, validForms.standard());
    const res = await post(
      formId,
      { Origin: "http://forms.test" },
      { amount: 25, donor: donor(), paymentMethod: card() },
    );
    expect(res.status).toBe(201);
  });
});

describe("Idempotency-Keys of a form", () => {
  it("are the same key whatever case the form id is spelled in: one charge", async () => {
    const formId = await createForm(t, validForms.standard());
    const body = { amount: 25, donor: donor(), paymentMethod: card() };
    const headers = { Origin: "http://forms.test", "Idempotency-Key": "gift-1" };
    const first = await post(formId, headers, body);
    const second = await post(formId.toUpperCase(), headers, body);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await paymentCount()).toBe(1);
  });

  it("never replay a kept answer to another site", async () => {
    const formId = await createForm(t, validForms.standard());
    const body = { amount: 25, donor: donor(), paymentMethod: card() };
    expect(
      (await post(formId, { Origin: "http://forms.test", "Idempotency-Key": "gift-2" }, body)).status,
    ).toBe(201);
    const stolen = await post(formId, { Origin: "https://evil.example", "Idempotency-Key": "gift-2" }, body);
    expect(stolen.status).toBe(403);
    expect(stolen.text).not.toContain("paymentID");
  });
});

describe("a checkout's completion (…/checkout/{paymentID}/complete)", () => {
  async function paid(formId: string): Promise<string> {
    const res = await post(formId, {}, { amount: 25, donor: donor(), paymentMethod: card() });
    expect(res.status).toBe(201);
    return (res.body.payment as { paymentID: string }).paymentID;
  }
  const complete = (formId: string, paymentId: string, headers: Record<string, string>) =>
    t.request<Record<string, unknown>>("POST", `/api/forms/${formId}/checkout/${paymentId}/complete`, {
      key: null,
      headers,
    });

  it("takes an Idempotency-Key, scoped by the form, and replays the answer", async () => {
    const formId = await createForm(t, validForms.standard());
    const paymentId = await paid(formId);
    const headers = { Origin: "http://forms.test", "Idempotency-Key": "complete-1" };
    const first = await complete(formId, paymentId, headers);
    expect(first.status).toBe(201);
    expect((first.body.payment as { paymentID: string }).paymentID).toBe(paymentId);
    const again = await complete(formId.toUpperCase(), paymentId, headers);
    expect(again.status).toBe(201);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await paymentCount()).toBe(1);
  });

  it("never replays a kept answer to another site", async () => {
    const formId = await createForm(t, validForms.standard());
    const paymentId = await paid(formId);
    const key = { "Idempotency-Key": "complete-2" };
    expect((await complete(formId, paymentId, { Origin: "http://forms.test", ...key })).status).toBe(201);
    const stolen = await complete(formId, paymentId, { Origin: "https://evil.example", ...key });
    expect(stolen.status).toBe(403);
    expect(stolen.text).not.toContain("paymentID");
  });
});
