import { cleanup, render } from "@testing-library/preact";
import { afterEach, beforeEach, vi } from "vitest";
import { location } from "../../widget/dashboard/router.js";
import { Shell } from "../../widget/dashboard/Shell.js";
import { me } from "../../widget/dashboard/session.js";

/**
 * A stand-in for the API the staff dashboard's pages call (widget/dashboard), for component tests in
 * happy-dom: `fetch` answers from the routes a test registers with `on` (the latest registered first; an
 * unknown path is a 404 in the API's shape) and records every call in `calls`. Each test starts with no
 * routes and no calls, and ends with the page unmounted and signed out.
 */

export interface Call {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

export type Answer = { status?: number; body?: unknown } | undefined;
export type Handler = (call: Call) => Answer | Promise<Answer>;

export type Role = "OWNER" | "FINANCE" | "STAFF";

export interface StandInApi {
  /** Every call made in this test, oldest first (the same array for the whole file, emptied per test). */
  readonly calls: Call[];
  /** Answers `method` on paths `path` matches with `handler`, before the routes registered earlier. */
  on(method: string, path: RegExp, handler: Handler): void;
  /** The calls that were not GETs, as their method, path and body. */
  writes(): Omit<Call, "headers">[];
  /** `GET /api/staff/me` answers a person of this role, with these permissions and any other fields. */
  signedIn(role: Role, permissions: string[], more?: Record<string, unknown>): void;
}

/** Installs the stand-in for every test of the calling file (registers its beforeEach and afterEach). */
export function standInApi(): StandInApi {
  const calls: Call[] = [];
  const routes: [string, RegExp, Handler][] = [];
  const on = (method: string, path: RegExp, handler: Handler) => {
    routes.unshift([method, path, handler]);
  };

  beforeEach(() => {
    calls.length = 0;
    routes.length = 0;
    vi.stubGlobal(
      "fetch",
      vi.fn(async (input: string, init: RequestInit = {}) => {
        const call: Call = {
          method: init.method ?? "GET",
          path: input,
          headers: (init.headers ?? {}) as Record<string, string>,
          body: init.body ? JSON.parse(String(init.body)) : undefined,
        };
        calls.push(call);
        const route = routes.find(([method, path]) => method === call.method && path.test(call.path));
        const answer = (await route?.[2](call)) ?? { status: 404, body: { error: "Not found" } };
        return new Response(answer.body === undefined ? null : JSON.stringify(answer.body), {
          status: answer.status ?? 200,
          headers: { "Content-Type": "application/json" },
        });
      }),
    );
  });

  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    me.value = undefined;
  });

  return {
    calls,
    on,
    writes: () =>
      calls.filter((c) => c.method !== "GET").map(({ method, path, body }) => ({ method, path, body })),
    signedIn(role, permissions, more = {}) {
      on("GET", /^\/api\/staff\/me$/, () => ({
        body: {
          userId: "usr_1",
          email: "pat@charity.example",
          organizationId: "org_1",
          organizationName: "Tree Trust",
          role,
          permissions,
          ...more,
        },
      }));
    },
  };
}

/** Renders the dashboard at `path` (`/dashboard/…`), as the router reads it from the address. */
export function openDashboard(path: string) {
  window.history.replaceState(null, "", path);
  location.value = {
    path: window.location.pathname.slice("/dashboard".length).replace(/^\/+|\/+$/g, ""),
    query: new URLSearchParams(window.location.search),
  };
  return render(<Shell />);
}

/** A payment as `GET /v1/payments` lists it (a completed one-time card gift), with `over` changed. */
export const payment = (over: Record<string, unknown> = {}) => ({
  paymentID: "pay_01",
  email: "ada@example.org",
  firstName: "Ada",
  lastName: "Donor",
  amount: 50,
  currency: "usd",
  status: "COMPLETED",
  fund: "",
  form: "Plant a tree",
  formID: "f1",
  frequency: "ONE_TIME",
  date: "2026-11-20T10:00:00.000Z",
  paymentMethod: "card",
  coverFees: false,
  anonymous: false,
  contactId: null,
  subscriptionId: null,
  feeAmount: 0,
  refundedAmount: 0,
  card: { brand: "visa", last4: "4242" },
  bankLast4: null,
  tickets: [],
  promoCode: null,
  discount: 0,
  customInputs: [],
  tribute: null,
  utm: {},
  failureMessage: null,
  ...over,
});

/** The organization as `GET /v1/organization` answers it (a USD organization on the sandbox). */
export const organization = {
  organizationName: "Tree Trust",
  organizationBaseURLs: ["https://trees.example"],
  timeZone: "UTC",
  currency: "USD",
  language: "en",
  logoUrl: null,
  brandColor: null,
  receiptReplyTo: null,
  receiptSubject: null,
  receiptMessage: null,
  requireTwoFactor: false,
};
