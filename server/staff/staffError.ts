/**
 * A refusal of the staff accounts' domain; the HTTP layer turns its kind into a status:
 * member 409, token/credentials/twoFactor 401 (twoFactor with `twoFactorRequired`), throttled 429,
 * password 400, code 403, conflict 409, notFound 404, unavailable 503, signInRequired 409 (with
 * `signInRequired`: a set-up link of a person who already has a password, who signs in with it instead),
 * notMember 403 (a session asked for in an organization the person has not joined).
 */
export class StaffError extends Error {
  constructor(
    readonly kind:
      | "member"
      | "token"
      | "credentials"
      | "throttled"
      | "password"
      | "twoFactor"
      | "code"
      | "conflict"
      | "notFound"
      | "unavailable"
      | "signInRequired"
      | "notMember",
    message: string,
    readonly retryAfterSeconds = 0,
  ) {
    super(message);
  }
}
