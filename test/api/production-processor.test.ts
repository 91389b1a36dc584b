import { afterEach, describe, expect, it } from "vitest";
import { createApiKey } from "../../server/store/keys.js";
import { createOrganization } from "../../server/store/organizations.js";
import { card, checkout, createForm, donor } from "../support/checkout.js";
import { setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * In production an organization that has not connected a processor is not on the sandbox: its pages say
 * the form is not accepting gifts yet and the checkout answers 409, recording nothing. A sandbox
 * organization (`org create --sandbox`) keeps its sandbox.
 */

let t: TestApp;
afterEach(async () => {
  await t.close();
});

describe("production without a processor", () => {
  it("answers 409 to a checkout and records nothing", async () => {
    t = await setupTestApp({ env: { NODE_ENV: "production", PUBLIC_URL: "https://forms.test" } });
    const formId = await createForm(t, validForms.standard());
    const res = await checkout(t, formId, { amount: 25, donor: donor(), paymentMethod: card() });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      error: "This form is not accepting gifts yet: the organization has not connected a payment processor",
    });
    expect(await t.store.db.selectFrom("payments").selectAll().execute()).toEqual([]);
    const org = await t.request<{ paymentProcessor: { name: string | null } }>("GET", "/v1/organization");
    expect(org.body.paymentProcessor.name).toBeNull();
  });

  it("shows a page that says the form is not accepting gifts yet, with no checkout on it", async () => {
    t = await setupTestApp({ env: { NODE_ENV: "production", PUBLIC_URL: "https://forms.test" } });
    const formId = await createForm(t, validForms.standard());
    const res = await t.app.request(`/donate/${formId}`);
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(html).toContain("not accepting gifts yet");
    expect(html).not.toContain("almoner-boot");
  });

  it("keeps a sandbox organization on the sandbox", async () => {
    t = await setupTestApp({ env: { NODE_ENV: "production", PUBLIC_URL: "https://forms.test" } });
    const org = await createOrganization(t.store.db, { name: "Test drive", sandbox: true }, Date.now());
    const { key } = await createApiKey(t.store.db, { organizationId: org.id, sandbox: true }, Date.now());
    const form = await t.request<{ formID: string }>("POST", "/v1/forms", {
      key,
      body: validForms.standard(),
    });
    const res = await checkout(t, form.body.formID, { amount: 25, donor: donor(), paymentMethod: card() });
    expect(res.status).toBe(201);
  });
});
