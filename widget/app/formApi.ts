import type { CheckoutEnv } from "./checkoutEnv.js";

/** A POST of a JSON body to the form's public API, and its JSON answer. */
export type PostToForm = <Answer = Record<string, unknown>>(
  path: string,
  body: string,
  idempotencyKey?: string,
) => Promise<{ res: Response; body: Answer }>;

/** Posts to the form's public API, `/api/forms/{id}` under `env.apiBase`, with `env.fetch` if given. */
export function formApi(env: CheckoutEnv, formID: string): PostToForm {
  const api = `${env.apiBase ?? ""}/api/forms/${encodeURIComponent(formID)}`;
  const doFetch = env.fetch ?? ((...args: Parameters<typeof fetch>) => fetch(...args));
  return async <Answer>(path: string, body: string, key?: string) => {
    const headers: Record<string, string> = { "Content-Type": "application/json" };
    if (key) headers["Idempotency-Key"] = key;
    const res = await doFetch(`${api}${path}`, { method: "POST", headers, body });
    return { res, body: (await res.json()) as Answer };
  };
}
