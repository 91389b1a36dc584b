import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Boot } from "../../widget/app/view.js";
import { setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * The hosted pages as the server sends them (/donate/<formID>, /attend/<formID>): the form's HTML in the
 * first response, the data it was rendered from as escaped JSON, the security headers, and the 404, 410
 * and inactive pages.
 */

let t: TestApp;
beforeAll(async () => {
  t = await setupTestApp();
});
afterAll(async () => {
  await t.close();
});

async function createForm(body: Record<string, unknown>): Promise<string> {
  const res = await t.request<{ formID: string }>("POST", "/v1/forms", { body });
  expect(res.status, res.text).toBe(201);
  return res.body.formID;
}

async function get(path: string) {
  const res = await t.app.request(path);
  return { status: res.status, headers: res.headers, html: await res.text() };
}

function boot(html: string): Boot {
  const m = /<script type="application\/json" id="almoner-boot">([^<]*)<\/script>/.exec(html);
  if (!m) throw new Error("no boot JSON");
  return JSON.parse(m[1]) as Boot;
}

describe("hosted checkout page", () => {
  it("shortens a long description for link previews to 200 characters without cutting an emoji in half", async () => {
    const id = await createForm({
      ...validForms.standard(),
      title: "Emoji",
      description: `${"a".repeat(198)}🌳🌳🌳 and more`,
    });
    const { html } = await get(`/donate/${id}`);
    const content = /<meta name="description" content="([^"]*)">/.exec(html)?.[1] ?? "";
    expect(content).toBe(`${"a".repeat(198)}🌳…`);
    expect(content).not.toContain("\uFFFD");
  });

  it("arrives server-rendered with title, description, social tags, the quote's total and the boot data", async () => {
    const id = await createForm({
      ...validForms.standard(),
      title: "Plant trees",
      description: "Every tree counts.",
      headerImage: "https://img.example/trees.jpg",
      defaultAmount: 50,
    });
    const { status, headers, html } = await get(`/donate/${id}`);
    expect(status).toBe(200);
    expect(headers.get("content-type")).toMatch(/^text\/html/);
    expect(html).toContain("<title>Plant trees</title>");
    expect(html).toContain('<meta name="description" content="Every tree counts.">');
    expect(html).toContain('<meta property="og:title" content="Plant trees">');
    expect(html).toContain('<meta property="og:image" content="https://img.example/trees.jpg">');
    expect(html).toContain('<meta name="twitter:card" content="summary_large_image">');
    expect(html).toContain(`<meta property="og:url" content="http://forms.test/donate/${id}">`);
    expect(html).toMatch(/<h1 id="alm-title">Plant trees<\/h1>/);
    expect(html).toMatch(/<input type="radio"[^>]*value="50" checked/);
    // The server's quote of the initial order is in the HTML: the total and the button.
    expect(html).toMatch(/<dt>Total<\/dt><dd>\$50<\/dd>/);
    expect(html).toContain("Donate $50</button>");
    expect(html).toMatch(/<script type="module" src="\/checkout\/app\.js(\?v=[\w-]+)?"><\/script>/);
    const data = boot(html);
    expect(data.view.formID).toBe(id);
    expect(data.quote?.quote.total).toBe(50);
  });

  it("describes a form without a description of its own in the page's language", async () => {
    const id = await createForm({ ...validForms.standard(), title: "Plant more trees", description: "" });
    const english = (await get(`/donate/${id}`)).html;
    expect(english).toMatch(/<meta name="description" content="Donate to Plant more trees, [^"]+">/);
    const german = (await get(`/donate/${id}?lang=de`)).html;
    expect(german).toMatch(/<meta name="description" content="Spenden: Plant more trees, [^"]+">/);
    expect(german).toMatch(/<meta property="og:description" content="Spenden: Plant more trees, [^"]+">/);
    const spanish = (await get(`/donate/${id}?lang=es`)).html;
    expect(spanish).toMatch(/<meta name="description" content="Dona a Plant more trees, [^"]+">/);
  });

  it("escapes form text in the HTML and in the embedded JSON", async () => {
    const title = `</script><script>alert(1)</script> <img src=x onerror=alert(2)> ${Math.random()}`;
    const description = "<!-- </script> & \u2028 \"quoted\" 'single'";
    const id = await createForm({ ...validForms.standard(), title, description });
    const { html } = await get(`/donate/${id}`);
    expect(html).not.toContain("<script>alert(1)");
    expect(html).not.toContain("<img src=x");
    expect(html).not.toContain("<!-- </script>");
    // Only the two scripts of the page itself.
    expect(html.match(/<script/g)).toHaveLength(2);
    const data = boot(html);
    expect(data.view.title).toBe(title);
    expect(data.view.description).toBe(description);
  });

  it("sends a CSP: scripts from self only, the inline style by nonce, no framing outside embed mode", async () => {
    const id = await createForm(validForms.standard());
    const { headers, html } = await get(`/donate/${id}`);
    const csp = headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(headers.get("x-frame-options")).toBe("DENY");
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(html).toContain(`<style nonce="${nonce}">`);
    const again = await get(`/donate/${id}`);
    expect(again.headers.get("content-security-policy")).not.toBe(csp);

    const embed = await get(`/donate/${id}?embed=1&embedId=abc`);
    const embedCsp = embed.headers.get("content-security-policy") ?? "";
    expect(embedCsp).toContain("script-src 'self'");
    expect(embedCsp).not.toContain("frame-ancestors");
    expect(embed.headers.get("x-frame-options")).toBeNull();
    expect(embed.html).toContain('class="alm alm-embedded"');
  });

  it("applies a checkout link's prefill in the first HTML", async () => {
    const id = await createForm({ ...validForms.standard(), frequencies: ["ONE_TIME", "MONTHLY"] });
    const link = await t.request<{ linkID: string }>("POST", `/v1/forms/${id}/links`, {
      body: { prefill: { firstName: "Grace", amount: 25, frequency: "MONTHLY" } },
    });
    const { html } = await get(`/donate/${id}?elementid=${link.body.linkID}`);
    expect(html).toMatch(/id="alm-firstName"[^>]*value="Grace"/);
    expect(html).toMatch(/value="MONTHLY" checked/);
    expect(html).toContain("Donate $25 monthly</button>");
    const plain = await get(`/donate/${id}?elementid=${crypto.randomUUID()}`);
    expect(plain.html).not.toContain("Grace");
  });

  it("starts a link that picks another frequency (and no amount) at that frequency's presets, not the default amount", async () => {
    for (const allowCustomAmount of [true, false]) {
      const id = await createForm({
        ...validForms.standard(),
        frequencies: ["ONE_TIME", "MONTHLY"],
        oneTimeAmounts: [50, 100, 250],
        monthlyAmounts: [10, 25, 50],
        defaultAmount: 250,
        allowCustomAmount,
      });
      const link = await t.request<{ linkID: string }>("POST", `/v1/forms/${id}/links`, {
        body: { prefill: { frequency: "MONTHLY" } },
      });
      const { html } = await get(`/donate/${id}?elementid=${link.body.linkID}`);
      expect(html, `custom ${allowCustomAmount}`).toContain("Donate $25 monthly</button>");
      const view = await t.app.request(`/api/forms/${id}?elementid=${link.body.linkID}`);
      expect(((await view.json()) as { defaultAmount: number | null }).defaultAmount).toBeNull();
      // Without the link, or with one naming the default frequency, the form's default amount.
      expect((await get(`/donate/${id}`)).html).toContain("Donate $250</button>");
      const once = await t.request<{ linkID: string }>("POST", `/v1/forms/${id}/links`, {
        body: { prefill: { frequency: "ONE_TIME" } },
      });
      expect((await get(`/donate/${id}?elementid=${once.body.linkID}`)).html).toContain(
        "Donate $250</button>",
      );
    }
  });

  it("renders without prefill for an unknown or malformed elementid, control characters included", async () => {
    const id = await createForm(validForms.standard());
    const link = await t.request<{ linkID: string }>("POST", `/v1/forms/${id}/links`, {
      body: { prefill: { firstName: "Grace" } },
    });
    // The page's checkout sends this id with the gift as it is; the checkout takes it (a control character
    // becomes a space, test/api/checkout.test.ts), so the page must render for it too.
    for (const elementid of [
      `${link.body.linkID}%0A`,
      `${link.body.linkID}%09x`,
      "%0D%0ASet-Cookie:%20a=b",
      "%07%1B%C2%85",
      "link_1",
      "x".repeat(300),
    ]) {
      const { status, headers, html } = await get(`/donate/${id}?elementid=${elementid}`);
      expect(status, elementid).toBe(200);
      expect(html, elementid).toContain('id="alm-firstName"');
      expect(html, elementid).not.toContain("Grace");
      expect(boot(html).view.prefill, elementid).toBeNull();
      // The language links keep it, percent-encoded.
      expect(headers.get("set-cookie"), elementid).toBeNull();
      expect(html, elementid).not.toMatch(/[\r\n]Set-Cookie/);
    }
  });

  it("sends only the chosen country in the first HTML; the browser lists the rest", async () => {
    const id = await createForm({ ...validForms.standard(), enableCountryDropdown: true });
    const link = await t.request<{ linkID: string }>("POST", `/v1/forms/${id}/links`, {
      body: { prefill: { country: "CA" } },
    });
    const { html } = await get(`/donate/${id}?elementid=${link.body.linkID}`);
    const select = /<select id="alm-country"[^>]*>(.*?)<\/select>/.exec(html)?.[1] ?? "";
    expect(select.match(/<option/g)).toHaveLength(2);
    expect(select).toContain(`<option selected value="CA">Canada</option>`);
  });

  it("resolves a prefilled country name in any of the pages' languages to its code; leaves others to the donor", async () => {
    const id = await createForm({ ...validForms.standard(), enableCountryDropdown: true });
    const open = async (country: string, lang = "en") => {
      const link = await t.request<{ linkID: string }>("POST", `/v1/forms/${id}/links`, {
        body: { prefill: { country } },
      });
      const { html } = await get(`/donate/${id}?elementid=${link.body.linkID}&lang=${lang}`);
      const select = /<select id="alm-country"[^>]*>(.*?)<\/select>/.exec(html)?.[1] ?? "";
      return { select, prefill: boot(html).view.prefill };
    };
    for (const [text, code] of [
      ["Deutschland", "DE"],
      ["allemagne", "DE"],
      ["ألمانيا", "DE"],
      ["Estados Unidos", "US"],
      ["États-Unis", "US"],
      ["UK", "GB"],
      ["cote d'ivoire", "CI"],
      ["mx", "MX"],
    ]) {
      const { select, prefill } = await open(text);
      expect(prefill?.country, text).toBe(code);
      expect(select, text).toMatch(new RegExp(`<option selected value="${code}">`));
    }
    const german = await open("Germany", "de");
    expect(german.select).toContain(`<option selected value="DE">Deutschland</option>`);
    for (const text of ["United States of America", "Atlantis", "XK"]) {
      const { select, prefill } = await open(text);
      expect(prefill?.country, text).toBeUndefined();
      expect(select, text).toBe("<option selected value>Choose…</option>");
    }
  });

  it("renders an event on /attend with its details and tickets", async () => {
    const id = await createForm({
      ...validForms.event(),
      enableTimeAndLocation: true,
      eventDate: "2027-05-15",
      startTime: "18:30",
      timeZone: "America/New_York",
      location: "Riverside Hall",
    });
    const { status, html } = await get(`/attend/${id}`);
    expect(status).toBe(200);
    expect(html).toContain("Saturday, May 15, 2027");
    expect(html).toContain("6:30 PM (Eastern Time)");
    expect(html).toContain("Riverside Hall");
    expect(html).toMatch(/<label for="alm-ticket-1"><strong>Table<\/strong>/);
    expect(html).toContain("$400 · admits 8");
  });

  it("answers 404 for an unknown form, 410 for a deleted one and a closed page for an inactive one", async () => {
    const unknown = await get(`/donate/${crypto.randomUUID()}`);
    expect(unknown.status).toBe(404);
    expect(unknown.html).toContain("Form not found");
    expect(unknown.headers.get("content-security-policy")).toContain("default-src 'none'");

    const id = await createForm(validForms.standard());
    const inactive = await createForm({ ...validForms.standard(), active: false, title: "Closed drive" });
    const closed = await get(`/donate/${inactive}`);
    expect(closed.status).toBe(200);
    expect(closed.html).toContain("This form is not accepting donations right now.");
    expect(closed.html).not.toContain("almoner-boot");

    await t.request("DELETE", `/v1/forms/${id}`);
    const gone = await get(`/donate/${id}`);
    expect(gone.status).toBe(410);
    expect(gone.html).toContain("This form is no longer available");
    const nonce = /'nonce-([^']+)'/.exec(gone.headers.get("content-security-policy") ?? "")?.[1];
    expect(gone.html).toContain(`<style nonce="${nonce}">`);
  });

  // `npm test` builds the widget (frame.js) before running the tests.
  it("in embed mode, the 404, 410 and inactive pages run frame.js by the response's nonce, and only then", async () => {
    const id = await createForm(validForms.standard());
    const inactive = await createForm({ ...validForms.standard(), active: false });
    await t.request("DELETE", `/v1/forms/${id}`);
    const frameJs = readFileSync(new URL("../../dist/widget/frame.js", import.meta.url), "utf8");
    for (const path of [`/donate/${crypto.randomUUID()}`, `/donate/${id}`, `/donate/${inactive}`]) {
      const framed = await t.app.request(`${path}?embed=1&embedId=e1`, {
        headers: { Referer: "https://site.example/giving" },
      });
      const html = await framed.text();
      const csp = framed.headers.get("content-security-policy") ?? "";
      const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
      expect(csp, path).toContain(`script-src 'self' 'nonce-${nonce}';`);
      expect(csp).not.toContain("unsafe-inline");
      expect(html).toContain(
        `<script nonce="${nonce}" data-parent-origin="https://site.example">${frameJs}</script>`,
      );
      const plain = await get(path);
      expect(plain.headers.get("content-security-policy")).toContain("script-src 'self';");
      expect(plain.html).not.toContain("<script");
    }
  });

  // `npm test` builds the widget before running the tests.
  it("serves the page's app.js and app.css by the names it gives them, cacheable for good, with 304s", async () => {
    const id = await createForm(validForms.standard());
    const { html } = await get(`/donate/${id}`);
    for (const [name, type] of [
      ["app.js", /^application\/javascript/],
      ["app.css", /^text\/css/],
    ] as const) {
      const src = new RegExp(`"(/checkout/${name.replace(".", "\\.")}\\?v=[\\w-]+)"`).exec(html)?.[1];
      expect(src, name).toBeTruthy();
      const res = await t.app.request(src as string);
      expect(res.status, name).toBe(200);
      expect(res.headers.get("content-type")).toMatch(type);
      expect(res.headers.get("cache-control")).toContain("immutable");
      expect((await res.text()).length).toBeGreaterThan(1000);
      const etag = res.headers.get("etag") as string;
      const again = await t.app.request(src as string, { headers: { "If-None-Match": etag } });
      expect(again.status).toBe(304);
      // A version of another build (a page rendered before a deploy) gets this build's file, briefly cached.
      for (const other of ["not-this-build", "0", ""]) {
        const stale = await t.app.request(`/checkout/${name}?v=${other}`);
        expect(stale.status, name).toBe(200);
        expect(stale.headers.get("cache-control"), `${name}?v=${other}`).toBe("public, max-age=300");
      }
    }
  });

  // Last: the organization's inputs then show on every form of this file's organization.
  it("shows the organization's own custom inputs after the form's, long text as a text area", async () => {
    const org = await t.request("PUT", "/v1/organization", {
      body: {
        globalCustomInputs: [
          { title: "Employer", inputType: "SHORT_TEXT_INPUT" },
          { title: "Why you give", inputType: "LONG_TEXT_INPUT", required: true },
          { title: "Region", inputType: "SINGLE_SELECTION_DROPDOWN", options: ["North", "South"] },
        ],
      },
    });
    expect(org.status, org.text).toBe(200);
    const id = await createForm({
      ...validForms.standard(),
      customInputs: [{ title: "In honor of", inputType: "short_text" }],
    });
    const { html } = await get(`/donate/${id}`);
    const labels = [...html.matchAll(/<label for="alm-ci-(\d+)">([^<]*)/g)].map((m) => m[2]);
    expect(labels).toEqual(["In honor of", "Employer", "Why you give", "Region"]);
    expect(html).toMatch(/<textarea id="alm-ci-2"[^>]*required/);
    expect(html).toMatch(/Why you give<span class="alm-req" aria-hidden="true"> \*<\/span>/);
    expect(html).toMatch(
      /<select id="alm-ci-3"[^>]*><option selected value>Choose…<\/option><option value="North">North/,
    );
  });
});
