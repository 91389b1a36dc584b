import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createForm } from "../support/checkout.js";
import { setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * Another tenant's overlay: a page of organization A that includes /overlay.js, opened as
 * `?donate&formid=<organization B's form>`, must not show B's checkout. The overlay page (`overlay=1`) may be
 * framed only by its own organization's sites (CSP frame-ancestors; none configured: nobody), and
 * overlay.js asks GET /api/forms/{id}/overlay before showing a form. The plain iframe embed stays
 * embeddable anywhere, and only an explicit embed value turns framing on.
 */

let t: TestApp;
let siteA: string;
let formA: string;
let formB: string;
let formBare: string;

beforeAll(async () => {
  t = await setupTestApp();
  siteA = "https://give.a.example";
  const set = await t.request("PUT", "/v1/organization", {
    body: { organizationBaseURLs: [`${siteA}/donate`, "http://localhost:8080/events/", `${siteA}/other`] },
  });
  expect(set.status).toBe(200);
  formA = await createForm(t, validForms.standard());

  const b = await t.newOrg({ name: "Organization B" });
  const setB = await t.request("PUT", "/v1/organization", {
    key: b.key,
    body: { organizationBaseURLs: ["https://b.example"] },
  });
  expect(setB.status).toBe(200);
  const made = await t.request<{ formID: string }>("POST", "/v1/forms", {
    key: b.key,
    body: validForms.standard(),
  });
  formB = made.body.formID;

  const bare = await t.newOrg({ name: "No sites yet" });
  formBare = (
    await t.request<{ formID: string }>("POST", "/v1/forms", { key: bare.key, body: validForms.standard() })
  ).body.formID;
});
afterAll(() => t.close());

async function framing(path: string): Promise<{ ancestors: string | undefined; xfo: string | null }> {
  const res = await t.app.request(path);
  expect(res.status).toBe(200);
  const csp = res.headers.get("Content-Security-Policy") ?? "";
  const ancestors = csp
    .split(";")
    .map((d) => d.trim())
    .find((d) => d.startsWith("frame-ancestors"));
  return { ancestors, xfo: res.headers.get("X-Frame-Options") };
}

describe("who may frame a checkout page", () => {
  it("lets only the form's own organization's sites frame its overlay page", async () => {
    expect(await framing(`/donate/${formA}?embed=1&overlay=1`)).toEqual({
      ancestors: `frame-ancestors ${siteA} http://localhost:8080`,
      xfo: null,
    });
    expect(await framing(`/donate/${formB}?embed=1&overlay=1`)).toEqual({
      ancestors: "frame-ancestors https://b.example",
      xfo: null,
    });
  });

  it("lets nobody frame the overlay page of an organization without sites", async () => {
    expect(await framing(`/donate/${formBare}?embed=1&overlay=1`)).toEqual({
      ancestors: "frame-ancestors 'none'",
      xfo: "DENY",
    });
  });

  it("keeps the iframe embed embeddable anywhere, turned on only by an explicit embed value", async () => {
    for (const on of ["embed=1", "embed=true"])
      expect(await framing(`/donate/${formB}?${on}`)).toEqual({ ancestors: undefined, xfo: null });
    for (const off of ["embed=0", "embed=", "embed=false", "embed", "overlay=0"])
      expect(await framing(`/donate/${formB}?${off}`), off).toEqual({
        ancestors: "frame-ancestors 'none'",
        xfo: "DENY",
      });
  });
});

describe("GET /api/forms/{id}/overlay, asked by overlay.js", () => {
  const ask = (formId: string, origin?: string) =>
    t.app.request(`/api/forms/${formId}/overlay`, { headers: origin ? { Origin: origin } : {} });

  it("answers 204 to the organization's own sites", async () => {
    for (const origin of [siteA, "http://localhost:8080"]) {
      const res = await ask(formA, origin);
      expect(res.status).toBe(204);
      expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");
    }
  });

  it("answers 403, readable by the asking page, to another tenant's site", async () => {
    const res = await ask(formB, siteA);
    expect(res.status).toBe(403);
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");
    const body = (await res.json()) as { error: string };
    expect(body.error).toContain(siteA);
    expect(body.error).toContain("organizationBaseURLs");
    expect((await ask(formBare, siteA)).status).toBe(403);
    expect((await ask(formA, "null")).status).toBe(403);
  });

  it("answers 410 for a deleted form, as its view and hosted page do, whatever the site", async () => {
    const gone = await createForm(t, validForms.standard());
    expect((await ask(gone, siteA)).status).toBe(204);
    expect((await t.request("DELETE", `/v1/forms/${gone}`)).status).toBe(200);
    const res = await ask(gone, siteA);
    expect(res.status).toBe(410);
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(await res.json()).toEqual({ error: "This form has been deleted" });
  });

  it("answers 404 with the API's error shape to an unknown form", async () => {
    const res = await ask("00000000-0000-4000-8000-000000000000", siteA);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "Form not found" });
  });
});
