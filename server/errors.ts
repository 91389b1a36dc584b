const VALIDATION_FAILED = "Validation failed";

/** The one error type: handlers throw it, the app's error handler renders it as the API's JSON error body. */
export class ApiError extends Error {
  constructor(
    readonly status: 400 | 401 | 402 | 403 | 404 | 405 | 409 | 410 | 413 | 415 | 422 | 429 | 500 | 502 | 503,
    message: string,
    readonly details?: string[],
    readonly headers?: Record<string, string>,
    /** More fields of the error body, e.g. a decline's `code` and `paymentID`. */
    readonly extra?: Record<string, unknown>,
    /**
     * The request ran, and left something behind that a second run would repeat (a payment the processor
     * made), before it failed: an Idempotency-Key keeps this answer, even a 5xx, and replays it to a retry.
     */
    readonly ran = false,
  ) {
    super(message);
  }

  static validation(details: string[]): ApiError {
    return new ApiError(400, VALIDATION_FAILED, details);
  }

  /** A 429 whose Retry-After tells the client when its next try is counted. */
  static tooMany(message: string, retryAfterSeconds: number): ApiError {
    return new ApiError(429, message, undefined, { "Retry-After": String(retryAfterSeconds) });
  }

  /** A refusal of the request's input, before anything happened: no Idempotency-Key keeps it. */
  get isValidation(): boolean {
    return this.status === 400 && this.message === VALIDATION_FAILED;
  }
}

/** A start-up problem (bad setting, unreachable database): printed as one line, then the process exits. */
export class StartupError extends Error {}

/** The message of anything thrown, for logs and stored failure reasons. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
