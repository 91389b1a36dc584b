import { expect } from "vitest";
import { createStaffMember } from "../../server/staff/accounts.js";
import type { StaffRole } from "../../shared/schemas/staff.js";
import type { TestApp } from "./testApp.js";

/** The password `member` sets up staff members with. */
export const PASSWORD = "correct horse battery staple";

/** An answer to a staff request, its JSON body read as it comes. */
export interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: test bodies are read field by field
  body: any;
  text: string;
}

export interface SendOptions {
  body?: unknown;
  /** The session cookie (`cookieOf` an answer). */
  cookie?: string;
  /** Another site's Origin, or null for none; default the client's. */
  origin?: string | null;
  /** Added last: they win over the Origin, Cookie and Content-Type set here. */
  headers?: Record<string, string>;
}

/**
 * Requests as the dashboard's pages make them (an Origin, a session cookie, a JSON body), and staff
 * members set up with PASSWORD. `app` is read at each call, so the client can be made before the
 * `beforeAll`/`beforeEach` that sets up the TestApp. `origin` defaults to the app's PUBLIC_URL, `now`
 * (the set-up links' clock) to Date.now.
 */
export function staffClient(app: () => TestApp, opts: { origin?: string; now?: () => number } = {}) {
  const now = opts.now ?? Date.now;

  async function send(method: string, path: string, o: SendOptions = {}): Promise<Answer> {
    const origin =
      o.origin === undefined ? (opts.origin ?? new URL(app().config.publicUrl).origin) : o.origin;
    const headers: Record<string, string> = {};
    if (origin) headers.Origin = origin;
    if (o.cookie) headers.Cookie = o.cookie;
    if (o.body !== undefined) headers["Content-Type"] = "application/json";
    Object.assign(headers, o.headers);
    const res = await app().app.request(path, {
      method,
      headers,
      body: o.body === undefined ? undefined : JSON.stringify(o.body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined, text };
  }

  const post = (path: string, body: unknown, cookie?: string, headers?: Record<string, string>) =>
    send("POST", path, { body, cookie, headers });

  /** The session cookie an answer sets (its name=value part), or "". */
  const cookieOf = (res: { headers: Headers }) => (res.headers.get("Set-Cookie") ?? "").split(";")[0];

  /** The token of a set-up or reset link. */
  const tokenOf = (url: string) => new URL(url).searchParams.get("token") ?? "";

  /** A person with `role` in the organization (default the test one), set up with PASSWORD: their id and session cookie. */
  async function staffMember(
    role: StaffRole,
    email: string,
    organizationId = app().org.id,
  ): Promise<{ userId: string; cookie: string }> {
    const t = app();
    const made = await createStaffMember(t.store, {
      organizationId,
      email,
      role,
      publicUrl: t.config.publicUrl,
      nowMs: now(),
    });
    const setup = await post("/api/staff/setup", { token: tokenOf(made.setupUrl), password: PASSWORD });
    expect(setup.status, setup.text).toBe(200);
    return { userId: made.userId, cookie: cookieOf(setup) };
  }

  /** A person with `role` in the organization (default the test one), set up with PASSWORD: their session cookie. */
  const member = async (role: StaffRole, email: string, organizationId?: string): Promise<string> =>
    (await staffMember(role, email, organizationId)).cookie;

  return { send, post, cookieOf, tokenOf, member, staffMember };
}
