/** The donor portal's calls to `/api/manage/{organizationId}/…` (same origin: the session cookie goes along). */

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
}

export interface Gifts {
  payments: Payment[];
  subscriptions: Subscription[];
}

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
      throw new PortalError(res.status, message || `The request failed (${res.status})`);
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
