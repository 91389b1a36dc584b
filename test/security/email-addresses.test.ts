import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { card, createForm, donor } from "../support/checkout.js";
import { setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * An e-mail field holds one address: a list or an address literal would let a receipt, or a form's
 * reply-to, reach someone else (header injection by comma, mail to an internal host).
 */

const ATTACKS = ["x,y@evil.example", "a,b@example.org", "a@[127.0.0.1]", "a@example.org, b@evil.example"];

let t: TestApp;
beforeEach(async () => {
  t = await setupTestApp({ env: { CHECKOUT_LIMIT_PER_IP: "0" } });
});
afterEach(async () => {
  await t.close();
});

describe("single e-mail addresses", () => {
  it("a form's replyToAddress", async () => {
    const form = (replyToAddress: string) => ({
      ...validForms.standard(),
      enableCustomEmail: true,
      replyToAddress,
      emailSubject: "Thanks",
      customMessage: "Thank you",
    });
    for (const address of ATTACKS) {
      const res = await t.request("POST", "/v1/forms", { body: form(address) });
      expect(res.status, address).toBe(400);
      expect(res.text).toContain("replyToAddress");
    }
    expect((await t.request("POST", "/v1/forms", { body: form("giving@example.org") })).status).toBe(201);
  });

  it("a donor's e-mail at checkout: 400, nothing charged", async () => {
    const formId = await createForm(t, validForms.standard());
    for (const address of ATTACKS) {
      const res = await t.request("POST", `/api/forms/${formId}/checkout`, {
        key: null,
        body: { amount: 25, donor: { ...donor(), email: address }, paymentMethod: card() },
      });
      expect(res.status, address).toBe(400);
    }
    expect(await t.store.db.selectFrom("payments").select("id").execute()).toEqual([]);
  });

  it("a contact's e-mail", async () => {
    for (const address of ATTACKS) {
      const res = await t.request("POST", "/v1/contacts", {
        body: { firstName: "Ada", lastName: "Lovelace", emails: [{ value: address }] },
      });
      expect(res.status, address).toBe(400);
    }
  });
});
