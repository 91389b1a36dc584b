import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../server/config.js";
import { card, createForm, donor } from "../support/checkout.js";
import { setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * Behind a proxy the donor's address is what the proxy saw: the right-most X-Forwarded-For entry (or the
 * entry of the outermost of TRUST_PROXY proxies). A client rotating the entries it writes on the left
 * stays one address for the per-address limit.
 */

let t: TestApp;
afterEach(async () => {
  await t.close();
});

async function attempt(formId: string, forwardedFor: string) {
  return t.request("POST", `/api/forms/${formId}/checkout`, {
    key: null,
    body: { amount: 25, donor: donor(), paymentMethod: card() },
    headers: { "X-Forwarded-For": forwardedFor },
  });
}

describe("the donor's address behind a proxy", () => {
  it("is the entry the proxy added: rotating the left entries does not get round the limit", async () => {
    t = await setupTestApp({ env: { TRUST_PROXY: "on", CHECKOUT_LIMIT_PER_IP: "3" } });
    const formId = await createForm(t, validForms.standard());
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await attempt(formId, `10.0.0.${i}, 203.0.113.7`)).status);
    expect(statuses).toEqual([201, 201, 201, 429, 429]);
    // Another address the proxy saw is another donor.
    expect((await attempt(formId, "10.0.0.1, 198.51.100.9")).status).toBe(201);
  });

  it("counts TRUST_PROXY=2 proxies from the right", async () => {
    t = await setupTestApp({ env: { TRUST_PROXY: "2", CHECKOUT_LIMIT_PER_IP: "1" } });
    const formId = await createForm(t, validForms.standard());
    expect((await attempt(formId, "1.1.1.1, 203.0.113.7, 192.0.2.10")).status).toBe(201);
    expect((await attempt(formId, "9.9.9.9, 203.0.113.7, 192.0.2.11")).status).toBe(429);
  });

  it("refuses a TRUST_PROXY that is not off, on or a number of proxies", async () => {
    expect(() => loadConfig({ TRUST_PROXY: "yes" })).toThrow(/TRUST_PROXY.*1 to 9/);
    expect(loadConfig({ TRUST_PROXY: "3" }).trustProxyHops).toBe(3);
    t = await setupTestApp();
  });
});
