/** Stripe's error answers: `{"error": {type, code, decline_code, message, param, doc_url, …}}` with its HTTP statuses. */

export interface ErrorBody {
  type: "invalid_request_error" | "card_error" | "api_error" | "idempotency_error";
  message: string;
  code?: string;
  decline_code?: string;
  param?: string;
  doc_url?: string;
  charge?: string;
  payment_intent?: unknown;
  setup_intent?: unknown;
  payment_method?: unknown;
  [key: string]: unknown;
}

export class StripeApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
  ) {
    super(body.message);
  }
}

export function docUrl(code: string): string {
  return `https://stripe.com/docs/error-codes/${code.replace(/_/g, "-")}`;
}

export function invalidRequest(
  message: string,
  opts: { param?: string; code?: string; status?: number; extra?: Record<string, unknown> } = {},
): StripeApiError {
  const body: ErrorBody = { type: "invalid_request_error", message };
  if (opts.code) {
    body.code = opts.code;
    body.doc_url = docUrl(opts.code);
  }
  if (opts.param) body.param = opts.param;
  Object.assign(body, opts.extra);
  return new StripeApiError(opts.status ?? 400, body);
}

export function missingParam(param: string): StripeApiError {
  return invalidRequest(`Missing required param: ${param}.`, { param, code: "parameter_missing" });
}

export function invalidParam(param: string, message: string): StripeApiError {
  return invalidRequest(message, { param, code: "parameter_invalid" });
}

export function resourceMissing(kind: string, id: string, param = "id"): StripeApiError {
  return invalidRequest(`No such ${kind}: '${id}'`, { param, code: "resource_missing", status: 404 });
}

export function unexpectedState(message: string, extra?: Record<string, unknown>): StripeApiError {
  return invalidRequest(message, { code: "payment_intent_unexpected_state", extra });
}

export function maskKey(key: string): string {
  const m = /^((?:sk|pk|rk)_(?:test|live)_)/.exec(key);
  const prefix = m ? m[1] : "";
  return `${prefix}****${key.slice(-4)}`;
}

export function invalidApiKey(key: string): StripeApiError {
  return new StripeApiError(401, {
    type: "invalid_request_error",
    message: `Invalid API Key provided: ${maskKey(key)}`,
  });
}

export function noApiKey(): StripeApiError {
  return new StripeApiError(401, {
    type: "invalid_request_error",
    message:
      "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/.",
  });
}

export function publishableKeyNotAllowed(): StripeApiError {
  return new StripeApiError(401, {
    type: "invalid_request_error",
    message:
      "This API call cannot be made with a publishable API key. Please use a secret API key. You can find a list of your API keys at https://dashboard.stripe.com/account/apikeys.",
  });
}

export function idempotencyMismatch(key: string): StripeApiError {
  return new StripeApiError(400, {
    type: "idempotency_error",
    message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
  });
}

export function idempotencyInFlight(key: string): StripeApiError {
  return new StripeApiError(409, {
    type: "idempotency_error",
    message: `There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through): ${key}. Please try again later.`,
  });
}

export function apiError(message = "An unknown error occurred"): StripeApiError {
  return new StripeApiError(500, { type: "api_error", message });
}

/** A card or bank decline, as Stripe words it. */
export interface Decline {
  code: string;
  decline_code?: string;
  message: string;
  param?: string;
}

export function cardError(decline: Decline, extra: Record<string, unknown> = {}): StripeApiError {
  const body: ErrorBody = {
    type: "card_error",
    code: decline.code,
    doc_url: docUrl(decline.code),
    message: decline.message,
  };
  if (decline.decline_code) body.decline_code = decline.decline_code;
  if (decline.param) body.param = decline.param;
  Object.assign(body, extra);
  return new StripeApiError(402, body);
}
