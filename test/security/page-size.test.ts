import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * A form as large as the request body allows made a hosted page of almost a megabyte (text that HTML and
 * JSON escaping multiply, repeated in the page's markup and its data). A form whose hosted page would
 * outgrow the budget is refused when it is saved, so every page a donor loads stays under 200 KB.
 */

const PAGE_BUDGET = 200 * 1024;

let t: TestApp;
beforeAll(async () => {
  t = await setupTestApp({ env: { MAX_BODY_BYTES: "1000000" } });
});
afterAll(() => t.close());

interface ErrorBody {
  error: string;
  details?: string[];
}

/** Text that escaping grows most: `&` is `&amp;` in HTML and `\u0026` in the page's JSON. */
const heavy = (n: number, seed: number) => `${seed}${"&<\"'".repeat(Math.ceil(n / 4))}`.slice(0, n);

/** Each shape fills one part of a form to `share` of what its schema allows. */
const shapes: Record<string, (share: number) => Record<string, unknown>> = {
  faqs: (share) => ({
    ...validForms.standard(),
    faqs: Array.from({ length: Math.max(1, Math.round(50 * share)) }, (_, i) => ({
      question: heavy(500, i),
      answer: heavy(5000, i),
    })),
  }),
  tickets: (share) => ({
    ...validForms.event(),
    tickets: Array.from({ length: Math.max(1, Math.round(100 * share)) }, (_, i) => ({
      name: heavy(200, i),
      price: 10,
      description: heavy(1000, i),
    })),
  }),
  levels: (share) => ({
    ...validForms.standard(),
    amountType: "giving_level",
    givingLevels: Array.from({ length: Math.max(1, Math.round(100 * share)) }, (_, i) => ({
      title: heavy(200, i),
      amount: 10 + i,
      description: heavy(1000, i),
    })),
  }),
  inputs: (share) => ({
    ...validForms.standard(),
    customInputs: Array.from({ length: Math.max(1, Math.round(50 * share)) }, (_, i) => ({
      title: heavy(300, i),
      inputType: "single_select",
      options: Array.from({ length: 40 }, (_, j) => `${i}-${j} ${heavy(60, j)}`),
    })),
  }),
};

async function pageBytes(path: string): Promise<number> {
  const res = await t.app.request(path);
  expect(res.status).toBe(200);
  return Buffer.byteLength(await res.text());
}

describe("the hosted page's size budget", () => {
  it("refuses a form whose page would outgrow 200 KB, and every form it accepts has a page under 200 KB", async () => {
    let refused = 0;
    let accepted = 0;
    let largest = 0;
    for (const [name, shape] of Object.entries(shapes))
      for (const share of [0.05, 0.2, 0.4, 0.7, 1]) {
        const res = await t.request<ErrorBody & { formID: string }>("POST", "/v1/forms", {
          body: shape(share),
        });
        if (res.status === 400) {
          refused++;
          expect(res.body.details?.join(" "), `${name} ${share}`).toMatch(
            /^form is too large for its hosted page \([\d,]+ KB, at most 180 KB\)/,
          );
          continue;
        }
        expect(res.status, `${name} ${share}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(201);
        accepted++;
        const path = `/${name === "tickets" ? "attend" : "donate"}/${res.body.formID}`;
        for (const variant of [path, `${path}?embed=1`]) {
          const bytes = await pageBytes(variant);
          largest = Math.max(largest, bytes);
          expect(bytes, `${name} ${share} ${variant}`).toBeLessThan(PAGE_BUDGET);
        }
      }
    expect(refused).toBeGreaterThan(0);
    expect(accepted).toBeGreaterThan(0);
    // The cap is not so tight that it refuses real forms: accepted pages reach well past 100 KB.
    expect(largest).toBeGreaterThan(100 * 1024);
  });

  it("refuses an update that would outgrow the budget and keeps the form as it was", async () => {
    const made = await t.request<{ formID: string }>("POST", "/v1/forms", { body: shapes.faqs(0.05) });
    expect(made.status).toBe(201);
    const id = made.body.formID;
    const before = await pageBytes(`/donate/${id}`);
    const grown = await t.request<ErrorBody>("PATCH", `/v1/forms/${id}`, {
      body: { faqs: shapes.faqs(1).faqs },
    });
    expect(grown.status).toBe(400);
    expect(grown.body.details?.[0]).toMatch(/^form is too large for its hosted page/);
    expect(await pageBytes(`/donate/${id}`)).toBe(before);
  });
});

/**
 * The organization's part of the page: its global custom inputs are in every one of its forms' pages. Twelve
 * inputs of a hundred options of `<` (a 238 KB body) made a 2.4 MB page of every form, as escaping multiplies
 * the text: a change of the organization that would take a form's page past the budget is refused too, and a
 * form is measured with the organization's inputs.
 */
describe("the hosted page's size budget, with the organization's part of the page", () => {
  type Org = Awaited<ReturnType<TestApp["newOrg"]>>;
  const as = (org: Org) => ({
    request: <T = ErrorBody>(method: string, path: string, body?: unknown) =>
      t.request<T>(method, path, { key: org.key, ...(body === undefined ? {} : { body }) }),
  });
  /** `count` dropdowns of `options` options of `length` characters of `text`. */
  const globals = (count: number, options: number, length: number, text = heavy) =>
    Array.from({ length: count }, (_, i) => ({
      title: `Global ${i}`,
      inputType: "SINGLE_SELECTION_DROPDOWN",
      options: Array.from({ length: options }, (_, j) => `${i}-${j} ${text(length, j)}`.slice(0, length)),
    }));
  const angles = (n: number) => "<".repeat(n);
  /** Every page a donor may get of the form: the page, the iframe and the overlay, in every language. */
  const variants = (path: string) => [
    path,
    `${path}?embed=1`,
    `${path}?overlay=1&embed=1`,
    ...["es", "fr", "de", "pt-BR", "ar"].map((lang) => `${path}?lang=${lang}`),
  ];
  const largestPage = async (paths: string[]) => {
    let largest = 0;
    for (const path of paths.flatMap(variants)) {
      const bytes = await pageBytes(path);
      expect(bytes, path).toBeLessThan(PAGE_BUDGET);
      largest = Math.max(largest, bytes);
    }
    return largest;
  };
  const tooLarge =
    /^globalCustomInputs would make the hosted page of form [0-9a-f-]{36} \("[^"]*"\) too large \([\d,]+ KB, at most 180 KB\)/;

  it("refuses global custom inputs of twelve dropdowns of a hundred '<' options, and keeps the organization as it was", async () => {
    const org = await t.newOrg();
    const api = as(org);
    const form = await api.request<{ formID: string }>("POST", "/v1/forms", validForms.standard());
    expect(form.status).toBe(201);
    const path = `/donate/${form.body.formID}`;
    const before = await pageBytes(path);
    const attack = { globalCustomInputs: globals(12, 100, 198, angles) };
    expect(JSON.stringify(attack).length).toBeGreaterThan(235_000);
    const res = await api.request("PUT", "/v1/organization", attack);
    expect(res.status).toBe(400);
    expect(res.body.error).toBeTruthy();
    expect(res.body.details).toHaveLength(1);
    expect(res.body.details?.[0]).toMatch(tooLarge);
    expect(res.body.details?.[0]).toContain(form.body.formID);
    const now = await api.request<{ globalCustomInputs: unknown[] }>("GET", "/v1/organization");
    expect(now.body.globalCustomInputs).toEqual([]);
    for (const variant of variants(path)) expect(await pageBytes(variant), variant).toBeLessThan(PAGE_BUDGET);
    expect(await pageBytes(path)).toBe(before);
    const json = await t.app.request(`/api/forms/${form.body.formID}`);
    expect(Buffer.byteLength(await json.text())).toBeLessThan(PAGE_BUDGET);
  });

  it("refuses them in an organization without forms, where every form's page would be too large", async () => {
    const api = as(await t.newOrg());
    const res = await api.request("PUT", "/v1/organization", {
      globalCustomInputs: globals(12, 100, 198, angles),
    });
    expect(res.status).toBe(400);
    expect(res.body.details?.[0]).toMatch(
      /^globalCustomInputs would make every hosted page too large \([\d,]+ KB with a form of a title and a fund alone, at most 180 KB\)/,
    );
    const form = await api.request("POST", "/v1/forms", validForms.standard());
    expect(form.status).toBe(201);
  });

  it("accepts global inputs only while every form's page, in every mode and language, stays under 200 KB", async () => {
    const api = as(await t.newOrg());
    const made = await Promise.all([
      api.request<{ formID: string }>("POST", "/v1/forms", validForms.standard()),
      api.request<{ formID: string }>("POST", "/v1/forms", validForms.event()),
    ]);
    for (const m of made) expect(m.status).toBe(201);
    const paths = [`/donate/${made[0].body.formID}`, `/attend/${made[1].body.formID}`];
    let refused = 0;
    let largest = 0;
    for (const count of [2, 8, 14, 20, 22, 23, 24, 26, 50]) {
      const res = await api.request("PUT", "/v1/organization", {
        globalCustomInputs: globals(count, 10, 60),
      });
      if (res.status === 400) {
        refused++;
        expect(res.body.details?.[0], `${count}`).toMatch(tooLarge);
      } else expect(res.status, `${count}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(200);
      largest = Math.max(largest, await largestPage(paths));
    }
    expect(refused).toBeGreaterThan(0);
    expect(largest).toBeGreaterThan(100 * 1024);
  });

  it("measures a form with the organization's global inputs: one that fits alone is refused with them", async () => {
    // Twelve dropdowns of the form's own, and (below) twelve of the organization's: each alone fits, not both.
    const body = {
      ...validForms.standard(),
      customInputs: globals(12, 10, 60).map(({ title, options }) => ({
        title: `Form ${title}`,
        inputType: "single_select",
        options,
      })),
    };
    const alone = as(await t.newOrg());
    const fits = await alone.request<{ formID: string }>("POST", "/v1/forms", body);
    expect(fits.status).toBe(201);
    const aloneBytes = await pageBytes(`/donate/${fits.body.formID}`);
    expect(aloneBytes).toBeGreaterThan(60 * 1024);

    const withGlobals = as(await t.newOrg());
    const set = await withGlobals.request("PUT", "/v1/organization", {
      globalCustomInputs: globals(12, 10, 60),
    });
    expect(set.status).toBe(200);
    const refused = await withGlobals.request("POST", "/v1/forms", body);
    expect(refused.status).toBe(400);
    expect(refused.body.details?.[0]).toMatch(
      /^form is too large for its hosted page \([\d,]+ KB, at most 180 KB\)/,
    );
    expect(refused.body.details?.[0]).toContain("12 global custom inputs");
    // Without them, the same form is taken.
    await withGlobals.request("PUT", "/v1/organization", { globalCustomInputs: [] });
    expect((await withGlobals.request("POST", "/v1/forms", body)).status).toBe(201);
  });
});

describe("the limits the OpenAPI document states for what a page holds", () => {
  type Schema = {
    properties?: Record<string, Schema>;
    items?: Schema;
    maxItems?: number;
    maxLength?: number;
  };
  it("caps the global inputs, their options and each option's length, and names the page budget as a rule", async () => {
    const doc = await t.request<{
      paths: Record<string, Record<string, { requestBody: { content: Record<string, { schema: Schema }> } }>>;
    }>("GET", "/v1/openapi.json");
    const put = doc.body.paths["/v1/organization"].put as unknown as {
      requestBody: { content: Record<string, { schema: Schema }> };
      "x-rules": { fields: string[]; rule: string }[];
    };
    const inputs = put.requestBody.content["application/json"].schema.properties?.globalCustomInputs;
    expect(inputs?.maxItems).toBe(50);
    const options = inputs?.items?.properties?.options;
    expect(options?.maxItems).toBe(100);
    expect(options?.items?.maxLength).toBe(200);
    expect(
      put["x-rules"].some((r) => r.fields.includes("globalCustomInputs") && r.rule.includes("180 KB")),
    ).toBe(true);
    const create = doc.body.paths["/v1/forms"].post as unknown as {
      "x-rules": { fields: string[]; rule: string }[];
    };
    expect(
      create["x-rules"].some((r) => r.fields.includes("customInputs") && r.rule.includes("180 KB")),
    ).toBe(true);
  });
});
