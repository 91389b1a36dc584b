import { appendFileSync } from "node:fs";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { card, checkout, createForm, donor } from "../support/checkout.js";
import {
  type Invalid,
  invalid,
  type JsonSchema,
  valid,
  validationErrors,
  validatorOf,
} from "../support/schemaArbitrary.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * The OpenAPI document and the server agree, in both directions. For every operation of
 * `GET /v1/openapi.json`, requests generated from the document (valid ones, and ones that break one
 * documented rule) are sent through the app, and each answer must be: not a 5xx; a status the document
 * lists for the operation; a body that validates against the schema documented for that status, with
 * the headers documented for it; a 400 exactly when the request broke a documented rule.
 *
 * Seeded (`FUZZ_SEED`) and bounded (`FUZZ_RUNS` per operation); `npm run fuzz:api` runs it longer. A 400
 * to a request the schemas accept passes only when it gives reasons the operation lists in `x-rules`
 * (rules a JSON Schema cannot state, such as an amount the form offers).
 */

interface Parameter {
  name: string;
  in: "path" | "query" | "header";
  required?: boolean;
  schema: JsonSchema;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema: JsonSchema }> };
  responses: Record<
    string,
    { content?: Record<string, { schema: JsonSchema }>; headers?: Record<string, { required?: boolean }> }
  >;
  deprecated?: boolean;
  security?: unknown[];
  "x-rules"?: { fields: string[]; error?: string; rule: string }[];
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
}

const trace = (...parts: unknown[]) =>
  appendFileSync(String(process.env.FUZZ_VERBOSE), `${parts.join(" ")}\n`);
// `npm run fuzz:api` runs each operation 2,000 times (a few minutes); `npm test` 60 times.
const RUNS = Number(process.env.FUZZ_RUNS ?? (process.env.npm_lifecycle_event === "fuzz:api" ? 2000 : 60));
const SEED = Number(process.env.FUZZ_SEED ?? 20261125);

let t: TestApp;
let doc: Document;
/** Ids of records that exist, by the collection they belong to. */
const existing: Record<string, string[]> = {};

beforeAll(async () => {
  t = await setupTestApp({
    env: {
      RATE_LIMIT_PER_HOUR: "1000000",
      CHECKOUT_LIMIT_PER_IP: "0",
      CHECKOUT_LIMIT_PER_FORM: "0",
      QUOTE_LIMIT_PER_IP: "0",
      QUOTE_LIMIT_PER_FORM: "0",
      PROMO_FAILURE_LIMIT: "0",
      CARD_FAILURE_LIMIT: "0",
      LEGACY_DONATIONS_API: "on",
    },
  });
  doc = (await t.request<Document>("GET", "/v1/openapi.json", { key: null })).body;
  // Records for the path ids to name: a form with a link, a payment, a subscription, a contact, a webhook.
  const formId = await createForm(t, { ...validForms.standard(), frequencies: ["ONE_TIME", "MONTHLY"] });
  const link = await t.request<{ linkID: string }>("POST", `/v1/forms/${formId}/links`, { body: {} });
  const once = await checkout(t, formId, { amount: 25, donor: donor(), paymentMethod: card() });
  const monthly = await checkout(t, formId, {
    amount: 10,
    frequency: "MONTHLY",
    donor: donor(),
    paymentMethod: card(),
  });
  const hook = await t.request<{ webhookId: string }>("POST", "/v1/webhooks", {
    body: { url: "https://example.org/hook", events: ["donation.created"] },
  });
  const contacts = await t.request<{ contacts: { id: string }[] }>("GET", "/v1/contacts");
  existing.forms = [formId];
  existing.links = [link.body.linkID];
  existing.payments = [(once.body.payment as { paymentID: string }).paymentID];
  existing.donations = existing.payments;
  existing.subscriptions = [(monthly.body.payment as { subscription: { id: string } }).subscription.id];
  existing.webhooks = [hook.body.webhookId];
  existing.contacts = contacts.body.contacts.map((c) => c.id);
});

afterAll(async () => {
  await t?.close();
});

/** The collection a path parameter names a record of: the path segment before it. */
function collectionOf(path: string, param: string): string {
  const segments = path.split("/");
  const at = segments.indexOf(`{${param}}`);
  const before = segments[at - 1] ?? "";
  return before === "forms" || before === "api" ? "forms" : before;
}

interface Request {
  path: string;
  query: Record<string, string>;
  body?: unknown;
  /** Whether every id in the path is one of a record that exists (or existed: deletions run last). */
  knownRecords: boolean;
  /** The documented rule this request breaks, if any. */
  broken?: string;
}

function queryString(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function requestArbitrary(path: string, op: Operation): fc.Arbitrary<Request> {
  const params = op.parameters ?? [];
  const pathParams = params.filter((p) => p.in === "path");
  const queryParams = params.filter((p) => p.in === "query");
  const bodySchema = op.requestBody?.content["application/json"]?.schema;

  const pathArb = fc
    .tuple(
      ...pathParams.map((p) => {
        const known = existing[collectionOf(path, p.name)] ?? [];
        const made = valid(p.schema).map((id) => ({ id, known: false }));
        return known.length > 0
          ? fc.oneof(
              { weight: 4, arbitrary: fc.constantFrom(...known).map((id) => ({ id, known: true })) },
              { weight: 1, arbitrary: made },
            )
          : made;
      }),
    )
    .map((values) => ({
      path: pathParams.reduce(
        (acc, p, i) => acc.replace(`{${p.name}}`, encodeURIComponent(String(values[i]?.id))),
        path,
      ),
      known: values.every((v) => v.known),
    }));
  const queryModel: Record<string, fc.Arbitrary<unknown>> = {};
  // An opaque cursor is valid only as a list returned it: valid requests leave it out.
  const opaque = (p: Parameter) => p.schema.description?.startsWith("Opaque") === true;
  for (const p of queryParams) if (!opaque(p)) queryModel[p.name] = valid(p.schema);
  const queryArb = fc.record(queryModel, {
    requiredKeys: queryParams.filter((p) => p.required && !opaque(p)).map((p) => p.name),
  });
  const bodyArb: fc.Arbitrary<unknown> = bodySchema
    ? op.requestBody?.required
      ? valid(bodySchema)
      : fc.option(valid(bodySchema), { nil: undefined })
    : fc.constant(undefined);

  const validRequest = fc.record({ path: pathArb, query: queryArb, body: bodyArb }).map(
    (r): Request => ({
      path: r.path.path,
      knownRecords: r.path.known,
      query: Object.fromEntries(Object.entries(r.query).map(([k, v]) => [k, queryString(v)])),
      body: r.body,
    }),
  );

  const broken: fc.Arbitrary<Request>[] = [];
  const badBody = bodySchema ? invalid(bodySchema) : null;
  if (badBody)
    broken.push(
      fc.tuple(validRequest, badBody).map(([r, bad]: [Request, Invalid]) => ({
        ...r,
        body: bad.value,
        broken: `body ${bad.rule}`,
      })),
    );
  for (const p of queryParams) {
    const bad = invalid(p.schema, 0, { asText: true });
    if (bad)
      broken.push(
        fc.tuple(validRequest, bad).map(([r, b]) => ({
          ...r,
          query: { ...r.query, [p.name]: queryString(b.value) },
          broken: `query ${p.name} ${b.rule}`,
        })),
      );
  }
  return broken.length > 0
    ? fc.oneof({ weight: 3, arbitrary: validRequest }, { weight: 2, arbitrary: fc.oneof(...broken) })
    : validRequest;
}

/** Operations in document order, deletions last so that the others still find their records. */
function operations(): [string, string, Operation][] {
  const all: [string, string, Operation][] = [];
  for (const [path, ops] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(ops)) all.push([method, path, op]);
  return [...all.filter(([m]) => m !== "delete"), ...all.filter(([m]) => m === "delete")];
}

/**
 * Whether a 400 to a request the schemas accept gives only reasons the operation documents in `x-rules`
 * (rules a JSON Schema cannot state): each detail line names one of their fields first.
 */
function byDocumentedRules(op: Operation, body: unknown): boolean {
  const rules = op["x-rules"] ?? [];
  const fields = new Set(rules.flatMap((r) => r.fields));
  const { error, details } = body as { error?: unknown; details?: unknown };
  if (!Array.isArray(details) || details.length === 0)
    return rules.some((r) => r.error !== undefined && String(error).startsWith(r.error));
  return details.every((line) => fields.has(String(line).split(/[ .[]/)[0] ?? ""));
}

describe(`the OpenAPI document and the server agree (${dialect})`, () => {
  it("every operation answers generated requests as documented", { timeout: 600_000 }, async () => {
    const problems: string[] = [];
    let sent = 0;
    for (const [method, path, op] of operations()) {
      const label = `${method.toUpperCase()} ${path}`;
      if (process.env.FUZZ_VERBOSE) trace(label);
      let problem = "";
      const fail = (message: string): never => {
        problem = `${label}: ${message}`;
        throw new Error(problem);
      };
      await fc
        .assert(
          fc.asyncProperty(requestArbitrary(path, op), async (req) => {
            const qs = new URLSearchParams(req.query).toString();
            const url = qs ? `${req.path}?${qs}` : req.path;
            if (process.env.FUZZ_VERBOSE) trace(" ", url, JSON.stringify(req.body));
            const res = await t.request(method.toUpperCase(), url, {
              body: req.body,
              // No /api route takes an API key (their sessions are cookies): the key goes to /v1 only.
              key: path.startsWith("/api/") ? null : undefined,
              // The dashboard's calls to the staff endpoints come from this instance's own pages.
              ...(path.startsWith("/api/staff/") && { headers: { Origin: t.config.publicUrl } }),
            });
            sent++;
            if (process.env.FUZZ_VERBOSE) trace("  ->", res.status);
            const what = `${label} ${url} ${JSON.stringify(req.body)?.slice(0, 300)} -> ${res.status} ${res.text.slice(0, 300)}`;
            const documented = op.responses[String(res.status)];
            // A 502 is an outside service (Stripe) out of reach, which the operation documents; any other 5xx is a bug.
            if (res.status >= 500 && !(res.status === 502 && documented)) fail(`5xx: ${what}`);
            if (!documented) fail(`undocumented status: ${what}`);
            const schema = documented.content?.["application/json"]?.schema;
            if (schema) {
              const check = validatorOf(schema);
              if (!check(res.body)) fail(`body off its schema (${validationErrors(check)}): ${what}`);
            }
            for (const [name, header] of Object.entries(documented.headers ?? {}))
              if (header.required && !res.headers.has(name))
                fail(`documented header ${name} missing: ${what}`);
            // A request that names no record is answered 404 whatever its body (the record is looked up first).
            const unknownRecord = res.status === 404 && !req.knownRecords;
            if (req.broken && res.status !== 400 && !unknownRecord)
              fail(`broke ${req.broken} but not a 400: ${what}`);
            if (!req.broken && res.status === 400 && !byDocumentedRules(op, res.body))
              fail(`valid request refused: ${what}`);
          }),
          { seed: SEED, numRuns: RUNS, endOnFailure: true },
        )
        .catch((err: Error) => {
          problems.push(problem || err.message);
          if (process.env.FUZZ_VERBOSE) trace("  failed", problems.at(-1));
        });
    }
    expect(problems).toEqual([]);
    expect(sent).toBeGreaterThan(RUNS * 20);
  });
});
