import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { recurringForm, subscribe, subscription } from "../billing/support.js";
import { createForm } from "../support/checkout.js";
import { setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * Names and titles are stored as people mean them: Unicode NFC, and without the invisible characters that
 * make a name look like another (zero-width, bidi overrides) or break what shows it (control characters).
 */

let t: TestApp;
beforeEach(async () => {
  t = await setupTestApp();
});
afterEach(async () => {
  await t.close();
});

describe("titles and names", () => {
  it("are stored without bidi overrides and zero-width characters, and refused with a control character", async () => {
    const formId = await createForm(t, {
      ...validForms.standard(),
      title: "Spring\u202e appeal\u200b",
    });
    const form = await t.request<{ title: string }>("GET", `/v1/forms/${formId}`);
    expect(form.body.title).toBe("Spring appeal");
    // A title is one line: a control character (a bell, a line break) is refused, naming the field.
    const bell = await t.request<{ details: string[] }>("POST", "/v1/forms", {
      body: { ...validForms.standard(), title: "Summer appeal\u0007" },
    });
    expect(bell.status).toBe(400);
    expect(bell.body.details).toEqual([
      "title must be a single line of text (no line breaks, tabs or other control characters)",
    ]);
    const contact = await t.request<{ contact: { firstName: string } }>("POST", "/v1/contacts", {
      body: { firstName: "A\u200dda\u2066", lastName: "Lovelace" },
    });
    expect(contact.body.contact.firstName).toBe("Ada");
  });

  it("are compared in NFC: the same title typed decomposed is the same title (409)", async () => {
    await createForm(t, { ...validForms.standard(), title: "Caf\u00e9 night" });
    const again = await t.request("POST", "/v1/forms", {
      body: { ...validForms.standard(), title: "Cafe\u0301 night" },
    });
    expect(again.status).toBe(409);
  });

  it("keep line breaks where text may have them", async () => {
    const formId = await createForm(t, { ...validForms.standard(), description: "Line one\nLine two" });
    const form = await t.request<{ description: string }>("GET", `/v1/forms/${formId}`);
    expect(form.body.description).toBe("Line one\nLine two");
  });
});

describe("subscriptions", () => {
  it("refuse an amount of 0 or less, naming the range", async () => {
    for (const amount of [0, -5]) {
      const res = await t.request("PUT", "/v1/subscriptions/sub_00000000000000000000000000", {
        body: { amount },
      });
      expect(res.status).toBe(400);
      expect(res.text).toContain("amount must be greater than 0 and at most 1,000,000");
    }
  });

  it("take any recurring amount above 0 with 2 decimals, as the API promises (the checkout keeps its own minimum)", async () => {
    const formId = await recurringForm(t);
    const quote = await t.request("POST", `/api/forms/${formId}/quote`, {
      key: null,
      body: { amount: 0.5, frequency: "MONTHLY" },
    });
    expect(quote.status, quote.text).toBe(400);
    const sub = await subscribe(t, formId, { amount: 25 });
    for (const amount of [0, -0.01]) {
      const res = await t.request("PUT", `/v1/subscriptions/${sub.id}`, { body: { amount } });
      expect(res.status, String(amount)).toBe(400);
      expect(res.body).toEqual({
        error: "Validation failed",
        details: ["amount must be greater than 0 and at most 1,000,000"],
      });
    }
    expect((await subscription(t.store.db, sub.id)).amount_cents).toBe(2500);
    const least = await t.request("PUT", `/v1/subscriptions/${sub.id}`, { body: { amount: 0.01 } });
    expect(least.status, least.text).toBe(200);
    expect((await subscription(t.store.db, sub.id)).amount_cents).toBe(1);
  });
});
