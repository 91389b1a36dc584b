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
