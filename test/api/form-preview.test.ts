import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countForms, dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/** The form editor's preview: a draft checked by the save's own rules and shown as the checkout's view, unsaved. */

let t: TestApp;
beforeAll(async () => {
  t = await setupTestApp();
});
afterAll(() => t.close());

type Preview = { view: Record<string, unknown>; input: Record<string, unknown> };

describe(`form preview (${dialect})`, () => {
  it("shows a new form's draft as the checkout would, and saves nothing", async () => {
    const before = await countForms(t.store.db, t.org.id);
    const res = await t.request<Preview>("POST", "/v1/forms/preview", {
      body: { title: "Plant a tree", funds: ["Trees"], oneTimeAmounts: [15, 30], color: "#116644" },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.view).toMatchObject({
      title: "Plant a tree",
      funds: ["Trees"],
      color: "#116644",
      amounts: { ONE_TIME: [15, 30] },
    });
    expect(res.body.input).toMatchObject({ title: "Plant a tree", funds: ["Trees"] });
    // The checkout's own words come along, as the hosted page sends them.
    const answer = res.body as Preview & { language: string; messages: Record<string, unknown> };
    expect(answer.language).toBe("en");
    expect(Object.keys(answer.messages).length).toBeGreaterThan(20);
    expect(Object.keys(answer.messages).every((key) => key.startsWith("checkout."))).toBe(true);
    expect(await countForms(t.store.db, t.org.id)).toBe(before);
  });

  it("refuses a bad draft with the very details the save gives", async () => {
    const draft = { title: "", funds: [], oneTimeAmounts: [-5], color: "green" };
    const preview = await t.request("POST", "/v1/forms/preview", { body: draft });
    const save = await t.request("POST", "/v1/forms", { body: draft });
    expect(preview.status).toBe(400);
    expect(save.status).toBe(400);
    expect(preview.body.details).toEqual(save.body.details);
    expect((preview.body.details as string[]).length).toBeGreaterThanOrEqual(3);
  });

  it("previews changes to a saved form unsaved, and its input makes a duplicate", async () => {
    const made = await t.request<{ formID: string }>("POST", "/v1/forms", { body: validForms.event() });
    const id = made.body.formID;
    const res = await t.request<Preview>("POST", `/v1/forms/${id}/preview`, {
      body: { title: "The gala, renamed" },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.view).toMatchObject({ formID: id, title: "The gala, renamed", formType: "EVENT" });
    expect((res.body.view.tickets as { name: string }[]).map((x) => x.name)).toEqual(["Adult", "Table"]);
    const stored = await t.request<{ title: string }>("GET", `/v1/forms/${id}`);
    expect(stored.body.title).not.toBe("The gala, renamed");

    // The whole form as POST takes it: sent back with a new title, it is a copy.
    const current = await t.request<Preview>("POST", `/v1/forms/${id}/preview`, { body: {} });
    const copy = await t.request<{ formID: string }>("POST", "/v1/forms", {
      body: { ...current.body.input, title: `${stored.body.title} (copy)` },
    });
    expect(copy.status, copy.text).toBe(201);
    const read = await t.request<{ tickets: unknown[] }>("GET", `/v1/forms/${copy.body.formID}`);
    expect(read.body.tickets).toHaveLength(2);
  });

  it("reaches only the caller's own forms, with a key that reads forms", async () => {
    const made = await t.request<{ formID: string }>("POST", "/v1/forms", { body: validForms.standard() });
    const other = await t.newOrg();
    const foreign = await t.request("POST", `/v1/forms/${made.body.formID}/preview`, {
      key: other.key,
      body: {},
    });
    expect(foreign.status).toBe(403);
    const writer = await t.newOrg({ permissions: ["contacts:read"] });
    expect((await t.request("POST", "/v1/forms/preview", { key: writer.key, body: {} })).status).toBe(403);
    expect(
      (await t.request("POST", "/v1/forms/00000000-0000-4000-8000-00000000abcd/preview", { body: {} }))
        .status,
    ).toBe(404);
  });
});
