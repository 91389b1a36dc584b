import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveElementPrefill } from "../../server/checkout/prefill.js";
import { dialect, setupTestApp, type TestApp, type TestOrg, validForms } from "../support/testApp.js";

/**
 * What a donor opening `?elementid=<linkID>` starts from: the prefill of an active
 * link of that very form, reduced to what the form shows and still accepts; nothing for an inactive,
 * deleted or foreign link; and the form's own absence or deletion.
 */

type Json = Record<string, unknown>;

interface Link {
  linkID: string;
  formID: string;
}

const UNKNOWN_UUID = "7d3b2a6e-5c1f-4e8a-9b0d-2f4e6a8c0b1d";

describe(`resolveElementPrefill (${dialect})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await setupTestApp({ env: { RATE_LIMIT_PER_HOUR: "1000000" } });
  });
  afterAll(() => t.close());

  async function createForm(body: Json, key?: string): Promise<string> {
    const res = await t.request<{ formID: string }>("POST", "/v1/forms", { body, key });
    expect(res.status, res.text).toBe(201);
    return res.body.formID;
  }

  async function createLink(formID: string, prefill: Json = {}, key?: string): Promise<string> {
    const res = await t.request<Link>("POST", `/v1/forms/${formID}/links`, { body: { prefill }, key });
    expect(res.status, res.text).toBe(201);
    return res.body.linkID;
  }

  const resolve = (formID: string, elementId?: string | null) =>
    resolveElementPrefill(t.store.db, formID, elementId);

  const ALL_TOGGLES = {
    enableOrganizationName: true,
    enableBillingAddress: true,
    enableCountryDropdown: true,
    enablePhone: true,
  };

  const DONOR = {
    firstName: "Ada",
    lastName: "Lovelace",
    email: "ada@example.org",
    phone: "+1 555 0100",
    organizationName: "Engines Ltd",
    address1: "1 Main St",
    address2: "Suite 4",
    city: "Springfield",
    state: "IL",
    postalCode: "62701",
    country: "US",
  };

  describe("an active link of the form", () => {
    let org: TestOrg;
    let formID: string;
    let linkID: string;
    let dietID: string;
    let employerID: string;
    beforeAll(async () => {
      org = await t.newOrg({ name: "Resolver Org" });
      const put = await t.request<{ globalCustomInputs: { id: string; title: string }[] }>(
        "PUT",
        "/v1/organization",
        {
          key: org.key,
          body: { globalCustomInputs: [{ title: "Employer", inputType: "SHORT_TEXT_INPUT" }] },
        },
      );
      expect(put.status, put.text).toBe(200);
      employerID = put.body.globalCustomInputs[0].id;
      formID = await createForm(
        {
          ...validForms.standard(),
          ...ALL_TOGGLES,
          funds: ["General", "Roof"],
          frequencies: ["ONE_TIME", "MONTHLY"],
          customInputs: [
            { title: "Dietary needs", inputType: "short_text" },
            { id: "shirt", title: "Shirt size", inputType: "single_select", options: ["S", "M"] },
            { id: "topics", title: "Topics", inputType: "multi_select", options: ["Arts", "Science"] },
          ],
        },
        org.key,
      );
      const form = await t.request<{ customInputs: { id: string; title: string }[] }>(
        "GET",
        `/v1/forms/${formID}`,
        { key: org.key },
      );
      dietID = form.body.customInputs.find((c) => c.title === "Dietary needs")?.id ?? "";
      expect(dietID).not.toBe("");
      linkID = await createLink(
        formID,
        {
          ...DONOR,
          amount: 25,
          fund: "Roof",
          frequency: "MONTHLY",
          customInputs: {
            "Dietary needs": "vegan",
            shirt: "M",
            Topics: ["Arts", "Science"],
            Employer: "Acme",
          },
          utmSource: "newsletter",
          utmMedium: "email",
          utmCampaign: "spring",
          utmTerm: "roof",
          utmContent: "button",
        },
        org.key,
      );
    });

    it("applies the prefill: kind ok, reason applied, with every value", async () => {
      const r = await resolve(formID, linkID);
      expect(r.kind).toBe("ok");
      if (r.kind !== "ok") return;
      expect(r.reason).toBe("applied");
      expect(r.prefill).toMatchObject({ ...DONOR, fund: "Roof", frequency: "MONTHLY" });
    });

    it("gives the amount in cents (25 dollars → 2500)", async () => {
      const r = await resolve(formID, linkID);
      expect(r.kind === "ok" && r.prefill?.amount).toBe(2500);
    });

    it("gives cents for fractional dollar amounts (12.34 → 1234, 0.01 → 1)", async () => {
      for (const [dollars, cents] of [
        [12.34, 1234],
        [0.01, 1],
        [1000000, 100000000],
      ]) {
        const id = await createLink(formID, { amount: dollars }, org.key);
        const r = await resolve(formID, id);
        expect(r.kind === "ok" && r.prefill?.amount, `${dollars}`).toBe(cents);
      }
    });

    it("keys custom answers by input id, even when the link used the title", async () => {
      const r = await resolve(formID, linkID);
      expect(r.kind === "ok" && r.prefill?.customInputs).toEqual({
        [dietID]: "vegan",
        shirt: "M",
        topics: ["Arts", "Science"],
        [employerID]: "Acme",
      });
    });

    it("gives UTM values as {source, medium, campaign, term, content}", async () => {
      const r = await resolve(formID, linkID);
      expect(r.kind === "ok" && r.prefill?.utm).toEqual({
        source: "newsletter",
        medium: "email",
        campaign: "spring",
        term: "roof",
        content: "button",
      });
      const prefill = r.kind === "ok" ? (r.prefill as unknown as Json) : {};
      expect(prefill).not.toHaveProperty("utmSource");
    });

    it("gives an empty prefill (no custom answers, no utm) for a link with no prefill", async () => {
      const id = await createLink(formID, {}, org.key);
      const r = await resolve(formID, id);
      expect(r).toEqual({ kind: "ok", reason: "applied", prefill: { customInputs: {}, utm: {} } });
    });

    it("finds the link and the form when their ids are written in upper case", async () => {
      const r = await resolve(formID.toUpperCase(), linkID.toUpperCase());
      expect(r.kind === "ok" && r.reason).toBe("applied");
    });

    it("applies the prefill while the form itself is deactivated (links keep their own flag)", async () => {
      const id = await createForm({ ...validForms.standard(), active: false }, org.key);
      const link = await createLink(id, { firstName: "Bo" }, org.key);
      const r = await resolve(id, link);
      expect(r.kind === "ok" && r.reason).toBe("applied");
      expect(r.kind === "ok" && r.prefill?.firstName).toBe("Bo");
    });
  });

  describe("links that do not apply", () => {
    let formID: string;
    beforeAll(async () => {
      formID = await createForm(validForms.standard());
    });

    it("an inactive link gives no prefill with reason inactive-link", async () => {
      const id = await createLink(formID, { firstName: "Ann" });
      expect((await t.request("POST", `/v1/forms/${formID}/links/${id}/deactivate`)).status).toBe(200);
      expect(await resolve(formID, id)).toEqual({ kind: "ok", prefill: null, reason: "inactive-link" });
    });

    it("a reactivated link applies again", async () => {
      const id = await createLink(formID, { firstName: "Ann" });
      await t.request("POST", `/v1/forms/${formID}/links/${id}/deactivate`);
      await t.request("POST", `/v1/forms/${formID}/links/${id}/activate`);
      const r = await resolve(formID, id);
      expect(r.kind === "ok" && r.reason).toBe("applied");
      expect(r.kind === "ok" && r.prefill?.firstName).toBe("Ann");
    });

    it("a deleted link gives no prefill with reason unknown-link", async () => {
      const id = await createLink(formID, { firstName: "Ann" });
      expect((await t.request("DELETE", `/v1/forms/${formID}/links/${id}`)).status).toBe(204);
      expect(await resolve(formID, id)).toEqual({ kind: "ok", prefill: null, reason: "unknown-link" });
    });

    it("an id that was never a link, or is not a UUID, gives unknown-link", async () => {
      expect(await resolve(formID, UNKNOWN_UUID)).toEqual({
        kind: "ok",
        prefill: null,
        reason: "unknown-link",
      });
      expect(await resolve(formID, "abc")).toEqual({ kind: "ok", prefill: null, reason: "unknown-link" });
    });

    it("a link of another form of the same organization gives foreign-link and no prefill", async () => {
      const other = await createForm(validForms.standard());
      const id = await createLink(other, { firstName: "Eve", email: "eve@example.org" });
      expect(await resolve(formID, id)).toEqual({ kind: "ok", prefill: null, reason: "foreign-link" });
      // It still applies on its own form.
      const own = await resolve(other, id);
      expect(own.kind === "ok" && own.reason).toBe("applied");
    });

    it("a link of another organization's form gives foreign-link and no prefill", async () => {
      const org = await t.newOrg({ name: "Elsewhere" });
      const theirForm = await createForm(validForms.standard(), org.key);
      const id = await createLink(theirForm, { email: "theirs@example.org" }, org.key);
      expect(await resolve(formID, id)).toEqual({ kind: "ok", prefill: null, reason: "foreign-link" });
    });

    it("no elementid (undefined, null or empty) gives no-link", async () => {
      for (const el of [undefined, null, ""])
        expect(await resolve(formID, el)).toEqual({ kind: "ok", prefill: null, reason: "no-link" });
    });
  });

  describe("the form itself", () => {
    it("a deleted form gives form-deleted, with or without a link", async () => {
      const formID = await createForm(validForms.standard());
      const id = await createLink(formID, { firstName: "Ann" });
      expect((await t.request("DELETE", `/v1/forms/${formID}`)).status).toBe(200);
      expect(await resolve(formID, id)).toEqual({ kind: "form-deleted" });
      expect(await resolve(formID)).toEqual({ kind: "form-deleted" });
    });

    it("an unknown form gives form-missing, with or without a link", async () => {
      const formID = await createForm(validForms.standard());
      const id = await createLink(formID);
      expect(await resolve(UNKNOWN_UUID, id)).toEqual({ kind: "form-missing" });
      expect(await resolve(UNKNOWN_UUID)).toEqual({ kind: "form-missing" });
      expect(await resolve("not-a-uuid", id)).toEqual({ kind: "form-missing" });
    });
  });

  describe("fields the form does not show", () => {
    async function resolvedFor(toggles: Json): Promise<Json> {
      const formID = await createForm({ ...validForms.standard(), ...toggles });
      const id = await createLink(formID, DONOR);
      const r = await resolve(formID, id);
      expect(r.kind === "ok" && r.reason).toBe("applied");
      return (r.kind === "ok" ? r.prefill : null) as unknown as Json;
    }

    it("keeps name and email on every form", async () => {
      const p = await resolvedFor({});
      expect(p).toMatchObject({ firstName: "Ada", lastName: "Lovelace", email: "ada@example.org" });
    });

    it("drops organizationName without enableOrganizationName and keeps it with it", async () => {
      expect(await resolvedFor({})).not.toHaveProperty("organizationName");
      expect((await resolvedFor({ enableOrganizationName: true })).organizationName).toBe("Engines Ltd");
    });

    it("drops address1, address2, city, state and postalCode without enableBillingAddress and keeps them with it", async () => {
      const off = await resolvedFor({});
      for (const key of ["address1", "address2", "city", "state", "postalCode"])
        expect(off).not.toHaveProperty(key);
      const on = await resolvedFor({ enableBillingAddress: true });
      expect(on).toMatchObject({
        address1: "1 Main St",
        address2: "Suite 4",
        city: "Springfield",
        state: "IL",
        postalCode: "62701",
      });
    });

    it("drops country without enableCountryDropdown and keeps it with it", async () => {
      expect(await resolvedFor({})).not.toHaveProperty("country");
      expect(await resolvedFor({ enableBillingAddress: true })).not.toHaveProperty("country");
      expect((await resolvedFor({ enableCountryDropdown: true })).country).toBe("US");
    });

    it("drops phone without enablePhone and keeps it with it", async () => {
      expect(await resolvedFor({})).not.toHaveProperty("phone");
      expect((await resolvedFor({ enablePhone: true })).phone).toBe("+1 555 0100");
    });

    it("each toggle reveals only its own fields", async () => {
      const p = await resolvedFor({ enablePhone: true });
      expect(p).not.toHaveProperty("organizationName");
      expect(p).not.toHaveProperty("address1");
      expect(p).not.toHaveProperty("country");
    });

    it("drops a field when its toggle is turned off after the link was made", async () => {
      const formID = await createForm({ ...validForms.standard(), ...ALL_TOGGLES });
      const id = await createLink(formID, DONOR);
      const before = await resolve(formID, id);
      expect(before.kind === "ok" && before.prefill?.phone).toBe("+1 555 0100");
      const res = await t.request("PUT", `/v1/forms/${formID}`, { body: { enablePhone: false } });
      expect(res.status, res.text).toBe(200);
      const after = await resolve(formID, id);
      expect(after.kind === "ok" && after.prefill).not.toHaveProperty("phone");
      expect(after.kind === "ok" && after.prefill?.city).toBe("Springfield");
    });
  });

  describe("values the form no longer accepts", () => {
    it("drops a fund removed by a later PUT of the form and keeps the other values", async () => {
      const formID = await createForm({ ...validForms.standard(), funds: ["General", "Roof"] });
      const id = await createLink(formID, { fund: "Roof", firstName: "Ann", amount: 30 });
      const before = await resolve(formID, id);
      expect(before.kind === "ok" && before.prefill?.fund).toBe("Roof");
      const res = await t.request("PUT", `/v1/forms/${formID}`, { body: { funds: ["General"] } });
      expect(res.status, res.text).toBe(200);
      const after = await resolve(formID, id);
      expect(after.kind === "ok" && after.reason).toBe("applied");
      const p = (after.kind === "ok" ? after.prefill : null) as unknown as Json;
      expect(p).not.toHaveProperty("fund");
      expect(p).toMatchObject({ firstName: "Ann", amount: 3000 });
    });

    it("drops a frequency no longer enabled on the form", async () => {
      const formID = await createForm({ ...validForms.standard(), frequencies: ["ONE_TIME", "MONTHLY"] });
      const id = await createLink(formID, { frequency: "MONTHLY" });
      await t.request("PUT", `/v1/forms/${formID}`, { body: { frequencies: ["ONE_TIME"] } });
      const r = await resolve(formID, id);
      expect(r.kind === "ok" && r.prefill).not.toHaveProperty("frequency");
    });

    it("drops a ticket removed from an event form", async () => {
      const formID = await createForm(validForms.event());
      const id = await createLink(formID, { ticket: "Table", firstName: "Ann" });
      const before = await resolve(formID, id);
      expect(before.kind === "ok" && before.prefill?.ticket).toBe("Table");
      const res = await t.request("PUT", `/v1/forms/${formID}`, {
        body: { tickets: [{ name: "Adult", price: 50 }] },
      });
      expect(res.status, res.text).toBe(200);
      const after = await resolve(formID, id);
      expect(after.kind === "ok" && after.prefill).not.toHaveProperty("ticket");
      expect(after.kind === "ok" && after.prefill?.firstName).toBe("Ann");
    });

    it("drops a custom answer whose option was removed, keeping the others", async () => {
      const formID = await createForm({
        ...validForms.standard(),
        customInputs: [
          { id: "shirt", title: "Shirt size", inputType: "single_select", options: ["S", "M", "L"] },
          { id: "note", title: "Note", inputType: "short_text" },
        ],
      });
      const id = await createLink(formID, { customInputs: { shirt: "L", Note: "hi" } });
      await t.request("PUT", `/v1/forms/${formID}`, {
        body: {
          customInputs: [
            { id: "shirt", title: "Shirt size", inputType: "single_select", options: ["S", "M"] },
            { id: "note", title: "Note", inputType: "short_text" },
          ],
        },
      });
      const r = await resolve(formID, id);
      expect(r.kind === "ok" && r.prefill?.customInputs).toEqual({ note: "hi" });
    });

    it("drops a giving-level amount that no longer matches a level", async () => {
      const formID = await createForm(validForms.givingLevel());
      const id = await createLink(formID, { amount: 50, firstName: "Ann" });
      const before = await resolve(formID, id);
      expect(before.kind === "ok" && before.prefill?.amount).toBe(5000);
      const res = await t.request("PUT", `/v1/forms/${formID}`, {
        body: { givingLevels: [{ title: "Friend", amount: 60, description: "" }] },
      });
      expect(res.status, res.text).toBe(200);
      const after = await resolve(formID, id);
      expect(after.kind === "ok" && after.prefill).not.toHaveProperty("amount");
    });

    it("keeps sponsorship group, product and price on a sponsorship form", async () => {
      const formID = await createForm(validForms.sponsorship());
      const id = await createLink(formID, { sponsorshipGroup: "Booths", product: "Gold", amount: 1000 });
      const r = await resolve(formID, id);
      expect(r.kind === "ok" && r.prefill).toMatchObject({
        sponsorshipGroup: "Booths",
        product: "Gold",
        amount: 100000,
      });
    });
  });

  describe("amounts the form's page can take", () => {
    const amountOf = async (formID: string, prefill: Json) => {
      const r = await resolve(formID, await createLink(formID, prefill));
      expect(r.kind === "ok" && r.reason).toBe("applied");
      return r.kind === "ok" ? r.prefill : null;
    };

    describe("a standard form without custom amounts", () => {
      let formID: string;
      beforeAll(async () => {
        formID = await createForm({
          ...validForms.standard(),
          frequencies: ["ONE_TIME", "MONTHLY"],
          oneTimeAmounts: [10, 25],
          monthlyAmounts: [5, 15],
          allowCustomAmount: false,
        });
      });

      it("keeps an amount that is a preset of the default frequency", async () => {
        expect((await amountOf(formID, { amount: 25 }))?.amount).toBe(2500);
      });

      it("drops an amount that is no preset, keeping the other values", async () => {
        const p = await amountOf(formID, { amount: 30, firstName: "Ann", fund: "General" });
        expect(p).not.toHaveProperty("amount");
        expect(p).toMatchObject({ firstName: "Ann", fund: "General" });
      });

      it("judges the amount by the presets of the prefilled frequency", async () => {
        expect(await amountOf(formID, { amount: 15, frequency: "MONTHLY" })).toMatchObject({
          amount: 1500,
          frequency: "MONTHLY",
        });
        const monthlyOfOneTime = await amountOf(formID, { amount: 25, frequency: "MONTHLY" });
        expect(monthlyOfOneTime).not.toHaveProperty("amount");
        expect(monthlyOfOneTime?.frequency).toBe("MONTHLY");
        expect(await amountOf(formID, { amount: 15 })).not.toHaveProperty("amount");
      });

      it("judges an amount without frequency by the presets of the form's defaultFrequency", async () => {
        const monthlyFirst = await createForm({
          ...validForms.standard(),
          frequencies: ["ONE_TIME", "MONTHLY"],
          defaultFrequency: "MONTHLY",
          oneTimeAmounts: [10, 25],
          monthlyAmounts: [5, 15],
          allowCustomAmount: false,
        });
        expect((await amountOf(monthlyFirst, { amount: 15 }))?.amount).toBe(1500);
        expect(await amountOf(monthlyFirst, { amount: 25 })).not.toHaveProperty("amount");
      });

      it("keeps the same amount on a form that allows custom amounts", async () => {
        const custom = await createForm({
          ...validForms.standard(),
          oneTimeAmounts: [10, 25],
          allowCustomAmount: true,
        });
        expect((await amountOf(custom, { amount: 30 }))?.amount).toBe(3000);
      });
    });

    describe("a sponsorship form, amount without product", () => {
      let formID: string;
      beforeAll(async () => {
        formID = await createForm({
          ...validForms.sponsorship(),
          sponsorshipGroups: [
            {
              groupTitle: "Booths",
              description: "",
              options: [
                { optionTitle: "Gold", amount: 1000 },
                { optionTitle: "Silver", amount: 500 },
              ],
            },
            {
              groupTitle: "Ads",
              description: "",
              options: [
                { optionTitle: "Full page", amount: 250 },
                { optionTitle: "Banner", amount: 500 },
              ],
            },
          ],
        });
      });

      it("chooses the product of that price", async () => {
        expect(await amountOf(formID, { amount: 250 })).toMatchObject({
          sponsorshipGroup: "Ads",
          product: "Full page",
          amount: 25000,
        });
      });

      it("chooses the first product of that price when several groups have one", async () => {
        expect(await amountOf(formID, { amount: 500 })).toMatchObject({
          sponsorshipGroup: "Booths",
          product: "Silver",
          amount: 50000,
        });
      });

      it("searches only the prefilled sponsorshipGroup when one is given", async () => {
        expect(await amountOf(formID, { amount: 500, sponsorshipGroup: "Ads" })).toMatchObject({
          sponsorshipGroup: "Ads",
          product: "Banner",
          amount: 50000,
        });
        const outside = await amountOf(formID, { amount: 1000, sponsorshipGroup: "Ads" });
        expect(outside?.sponsorshipGroup).toBe("Ads");
        expect(outside).not.toHaveProperty("product");
      });
    });
  });
});
