import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

describe(`forms round trip (${dialect})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await setupTestApp();
  });
  afterAll(() => t.close());

  it("creates a form and reads it back with the stored type", async () => {
    const created = await t.request("POST", "/v1/forms", { body: validForms.givingLevel() });
    expect(created.status).toBe(201);
    const got = await t.request("GET", `/v1/forms/${created.body.formID}`);
    expect(got.status).toBe(200);
    expect(got.body.formType).toBe("CROWDFUNDING_FORM");
  });
});
