import { afterEach, describe, expect, it } from "vitest";
import { CARDS, card, checkout, createForm, donor } from "../support/checkout.js";
import { setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * Card testing through a public form: numbers the processor refuses at once must leave a trace the
 * organization sees (FAILED payments, as declined charges do), and a burst of declines from a few
 * addresses must not close the form to every other donor for an hour.
 */

let t: TestApp;
afterEach(async () => {
  await t.close();
});

type Payment = { paymentID: string; status: string; paymentMethod?: { last4?: string } | null };

describe("card testing", () => {
  it("records a number the processor refuses at once as a FAILED payment in /v1/payments", async () => {
    t = await setupTestApp({ env: { CHECKOUT_LIMIT_PER_IP: "0" } });
    const formId = await createForm(t, validForms.standard());
    // A Luhn-valid number that is not one of the sandbox's test cards: refused when it is tokenized.
    const res = await checkout(t, formId, {
      amount: 25,
      donor: donor(),
      paymentMethod: card("4111111111111111"),
    });
    expect(res.status).toBe(402);
    expect(res.body.code).toBe("card_declined");
    const paymentId = String(res.body.paymentID);
    expect(paymentId).toMatch(/^pay_/);
    const listed = await t.request<{ payments: Payment[] }>("GET", "/v1/payments");
    const payment = listed.body.payments.find((p) => p.paymentID === paymentId);
    expect(payment?.status).toBe("FAILED");
    expect(JSON.stringify(payment)).not.toContain("4111111111111111");
  });

  it("a burst of declines from a few addresses does not close the form to other donors", async () => {
    t = await setupTestApp({
      env: {
        CHECKOUT_LIMIT_PER_IP: "0",
        CHECKOUT_LIMIT_PER_FORM: "20",
        TRUST_PROXY: "1",
        CARD_FAILURE_LIMIT: "0",
      },
    });
    const formId = await createForm(t, validForms.standard());
    const from = (ip: string, number: string) =>
      checkout(
        t,
        formId,
        { amount: 25, donor: donor(), paymentMethod: card(number) },
        { "X-Forwarded-For": ip },
      );
    const attackers = ["203.0.113.10", "203.0.113.11", "203.0.113.12"];
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++)
      statuses.push(
        (await from(attackers[i % attackers.length], i % 2 ? CARDS.declined : "4111111111111111")).status,
      );
    // The burst filled the form's hour: its addresses are then refused with Retry-After.
    expect(statuses).toEqual([...Array(20).fill(402), ...Array(20).fill(429)]);
    const refused = await from(attackers[0], CARDS.visa);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    // Donors from other addresses still give, more than once.
    for (const donorIp of ["198.51.100.1", "198.51.100.2", "198.51.100.1"])
      expect((await from(donorIp, CARDS.visa)).status).toBe(201);
    // Every declined attempt of the burst is visible to the organization.
    const failed = await t.request<{ payments: Payment[] }>("GET", "/v1/payments?limit=100");
    expect(failed.body.payments.filter((p) => p.status === "FAILED")).toHaveLength(20);
  });
});
