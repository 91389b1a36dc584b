/** The donor portal's calls to `/api/manage/{organizationId}/…` (same origin: the session cookie goes along). */
import type { MessageKey } from "../../shared/i18n/catalogs/en.js";
import { portalLanguage, t } from "./i18n.js";

export interface Payment {
  paymentID: string;
  amount: number;
  currency: string;
  status: string;
  date: string;
  frequency: string;
  form: string;
  fund: string;
  email: string;
  refundedAmount: number;
}

export interface Subscription {
  id: string;
  status: "ACTIVE" | "CANCELLED";
  amount: number;
  currency: string;
  frequency: string;
  nextBillingDate: string | null;
  fund: string;
  email: string;
  paymentMethod: { type: string; brand: string | null; last4: string | null };
  /** The frequencies it may be changed to (its form's recurring ones; its own included). */
  frequencies: string[];
}

export interface Gifts {
  payments: Payment[];
  subscriptions: Subscription[];
  /** The years a statement lists gifts in (the organization's calendar), newest first. */
  statementYears: number[];
  /** The organization's IANA time zone: the dates shown are the days there. */
  timeZone: string;
  /** The year it is in that zone: the statement offered when there is none of a gift. */
  currentYear: number;
}

/** The catalog's words for a refusal, by its status. */
const ERRORS = {
  400: "portal.error.400",
  401: "portal.error.401",
  404: "portal.error.404",
  409: "portal.error.409",
  429: "portal.error.429",
} satisfies Record<number, MessageKey>;

export class PortalError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function portalApi(organizationId: string) {
  const base = `/api/manage/${encodeURIComponent(organizationId)}`;
  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${base}${path}`, {
      method,
      credentials: "same-origin",
      headers: body === undefined ? {} : { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const parsed = text ? (JSON.parse(text) as unknown) : undefined;
    if (!res.ok) {
      const error = (parsed as { error?: string; details?: string[] } | undefined) ?? {};
      const message = [error.error, ...(error.details ?? [])].filter(Boolean).join(": ");
      // The server's words are English (the API's language); a page in another language says its own,
      // followed by the reasons the server gives (a refused change's `details`).
      const words =
        portalLanguage() === "en"
          ? message || `The request failed (${res.status})`
          : [
              t((ERRORS as Record<number, MessageKey>)[res.status] ?? "portal.error.other"),
              ...(error.details ?? []),
            ].join(" ");
      throw new PortalError(res.status, words);
    }
    return parsed as T;
  }
  return {
    receiptUrl: (paymentId: string, language: string) =>
      `${base}/receipts/${encodeURIComponent(paymentId)}?lang=${encodeURIComponent(language)}`,
    statementUrl: (year: number, language: string) =>
      `${base}/statement?year=${year}&lang=${encodeURIComponent(language)}`,
    requestLink: (email: string, language: string) =>
      call<{ message: string }>("POST", "/link", { email, language }),
    previewLink: (token: string) =>
      call<{ email: string; expiresAt: string }>("POST", "/link/preview", { token }),
    signIn: (token: string) => call<{ expiresAt: string }>("POST", "/session", { token }),
    signOut: () => call<void>("POST", "/logout"),
    gifts: () => call<Gifts>("GET", "/gifts"),
    change: (id: string, body: Record<string, unknown>) =>
      call<Subscription>("PUT", `/subscriptions/${encodeURIComponent(id)}`, body),
    updateLink: (id: string) =>
      call<{ url: string }>("POST", `/subscriptions/${encodeURIComponent(id)}/payment-method-update-link`),
  };
}

export type PortalApi = ReturnType<typeof portalApi>;
