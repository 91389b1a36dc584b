import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HTTPS_URL } from "../../shared/schemas/common.js";
import { createForm } from "../support/checkout.js";
import { setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * Addresses an organization gives (a form's header image, a webhook's url, an update link's returnUrl) never
 * carry a user name or password: the header image is shown to every donor in the hosted page, so a
 * credential in it would be published (and `https://trusted.example@evil.example/` reads as another host).
 */

let t: TestApp;
beforeEach(async () => {
  t = await setupTestApp();
});
afterEach(async () => {
  await t.close();
});

const CREDENTIALED = ["https://user@example.org/a.png", "https://user:secret@example.org/a.png"];

describe("a form's headerImage", () => {
  it("is refused with a user name or password, on create and on update", async () => {
    for (const headerImage of CREDENTIALED) {
      const created = await t.request("POST", "/v1/forms", {
        body: { ...validForms.standard(), headerImage },
      });
      expect(created.status, headerImage).toBe(400);
      expect(created.body).toEqual({
        error: "Validation failed",
        details: ["headerImage must not contain a user name or password"],
      });
    }
    const formId = await createForm(t, {
      ...validForms.standard(),
      headerImage: "https://example.org/a.png",
    });
    for (const headerImage of CREDENTIALED) {
      const updated = await t.request("PUT", `/v1/forms/${formId}`, { body: { headerImage } });
      expect(updated.status, headerImage).toBe(400);
      expect(updated.text).toContain("headerImage must not contain a user name or password");
    }
    const form = await t.request<{ headerImage: string }>("GET", `/v1/forms/${formId}`);
    expect(form.body.headerImage).toBe("https://example.org/a.png");
  });

  it("is told so in the words a webhook's url is", async () => {
    const hook = await t.request("POST", "/v1/webhooks", {
      body: { url: "https://user@example.org/hook", events: ["donation.created"] },
    });
    expect(hook.status).toBe(400);
    expect(hook.text).toContain("url must not contain a user name or password");
  });
});

describe("an address the document's pattern refuses", () => {
  const REFUSED = [
    ["https://example.org/a b.png", "must not contain spaces or line breaks (write a space as %20)"],
    ["https://example.org/a.png#", "must not contain a fragment (#...)"],
    ["https://example.org/a.png#top", "must not contain a fragment (#...)"],
    ["https://user@example.org/a.png", "must not contain a user name or password"],
  ] as const;

  it("is refused by the server too: a header image, a logo and a webhook's url", async () => {
    const pattern = new RegExp(HTTPS_URL.pattern);
    const formId = await createForm(t, validForms.standard());
    for (const [address, message] of REFUSED) {
      expect(pattern.test(address), address).toBe(false);
      const image = await t.request("PUT", `/v1/forms/${formId}`, { body: { headerImage: address } });
      expect(image.status, address).toBe(400);
      expect(image.body).toEqual({ error: "Validation failed", details: [`headerImage ${message}`] });
      const logo = await t.request("PUT", "/v1/organization", { body: { logoUrl: address } });
      expect(logo.status, address).toBe(400);
      expect(logo.text).toContain(`logoUrl ${message}`);
      const hook = await t.request("POST", "/v1/webhooks", {
        body: { url: address.replace(".png", "/hook"), events: ["donation.created"] },
      });
      expect(hook.status, address).toBe(400);
      expect(hook.text).toContain(`url ${message}`);
    }
    const kept = await t.request<{ headerImage: string | null }>("GET", `/v1/forms/${formId}`);
    expect(kept.body.headerImage).toBeNull();
    const fine = "https://example.org/a%20b.png?size=2";
    expect(pattern.test(fine)).toBe(true);
    const image = await t.request("PUT", `/v1/forms/${formId}`, { body: { headerImage: fine } });
    expect(image.status, image.text).toBe(200);
  });
});
