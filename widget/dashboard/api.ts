/**
 * The dashboard's calls: `/api/staff/…` for the person's account and `/v1/…` for the organization's data, both
 * with the session cookie (same origin; the browser never holds an API key). A refusal is thrown as an
 * ApiFailure with the server's words, which name what was wrong.
 */

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** The API's 400 details (`url must be …`, `events[0] …`), when a refusal has them. */
export const detailsOf = (err: unknown): string[] =>
  err instanceof ApiFailure && Array.isArray(err.body.details) ? err.body.details.map(String) : [];

/** The field a detail is about: its first word, before a space, `.` or `[`. */
export const fieldOf = (detail: string): string => detail.split(/[ .[]/)[0] ?? "";

/** The details about one field. */
export const detailsAbout = (details: string[], field: string): string[] =>
  details.filter((d) => fieldOf(d) === field);

/** Called when a request finds the session ended (401 from /v1): the shell shows the sign-in page. */
let onSignedOut: () => void = () => {};
export const whenSignedOut = (handler: () => void): void => {
  onSignedOut = handler;
};

export interface CallOptions {
  /** An Idempotency-Key: the same key for a retried request, so a refund is never made twice. */
  idempotencyKey?: string;
}

export async function call<T>(
  method: string,
  path: string,
  body?: unknown,
  options: CallOptions = {},
): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (options.idempotencyKey) headers["Idempotency-Key"] = options.idempotencyKey;
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: "same-origin",
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiFailure(0, "The server could not be reached. Check the connection and try again.", {});
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!res.ok) {
    const error = (parsed ?? {}) as Record<string, unknown>;
    const details = Array.isArray(error.details) ? error.details.map(String) : [];
    const words = typeof error.error === "string" ? error.error : `The request failed (${res.status})`;
    if (res.status === 401 && path.startsWith("/v1/")) onSignedOut();
    throw new ApiFailure(res.status, [words, ...details].join(": "), error);
  }
  return parsed as T;
}

export const get = <T>(path: string): Promise<T> => call<T>("GET", path);

/** A query string of the values that are set (empty strings and undefined are left out). */
export function query(values: Record<string, string | number | boolean | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(values))
    if (value !== undefined && value !== "") params.set(key, String(value));
  const text = params.toString();
  return text ? `?${text}` : "";
}

/**
 * Downloads a list as CSV: the same list endpoint, asked with `Accept: text/csv` (every row its filters
 * match), saved as `<name>-<today, UTC>.csv`.
 */
export async function downloadCsv(path: string, name: string, day: string): Promise<void> {
  const res = await fetch(path, { credentials: "same-origin", headers: { Accept: "text/csv" } });
  if (!res.ok) {
    const error = (await res.json().catch(() => ({}))) as { error?: string };
    throw new ApiFailure(res.status, error.error ?? `The export failed (${res.status})`, {});
  }
  const url = URL.createObjectURL(await res.blob());
  const link = document.createElement("a");
  link.href = url;
  link.download = `${name}-${day}.csv`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A fresh Idempotency-Key for one action the person confirms. */
export const newIdempotencyKey = (): string => crypto.randomUUID();

/**
 * Whether a failure is the final answer to a request sent with an Idempotency-Key: the server keeps every
 * answer below 500 but 429 against the key (server/api/route.ts), and the same key would only replay it, so
 * asking again needs a new one. No answer (the network), a 5xx, a 429 or "still in progress" leaves the
 * outcome open: a retry sends the same key, and the action is made once however often it is asked.
 */
export function isFinalAnswer(err: unknown): boolean {
  if (!(err instanceof ApiFailure)) return false;
  if (err.status === 0 || err.status === 429 || err.status >= 500) return false;
  // Another request with the key is still running: it may yet succeed.
  return !(err.status === 409 && /still in progress/i.test(String(err.body.error ?? "")));
}

export interface Page<Item> {
  items: Item[];
  next: string | undefined;
}

/** One page of a `/v1` list: `{ <name>: [...], lastEvaluatedKey? }`. */
export async function listPage<Item>(
  path: string,
  name: string,
  params: Record<string, string | number | boolean | undefined>,
  cursor?: string,
): Promise<Page<Item>> {
  const body = await get<Record<string, unknown>>(`${path}${query({ ...params, lastEvaluatedKey: cursor })}`);
  const items = (body[name] ?? []) as Item[];
  const next = typeof body.lastEvaluatedKey === "string" ? body.lastEvaluatedKey : undefined;
  return { items, next };
}
