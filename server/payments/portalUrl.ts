/** The donor portal of an organization: where its donors sign in with their e-mail address. */
export const PORTAL_PAGE_PATH = "/manage";

/**
 * The portal's address; with `query.token`, a sign-in link; with `query.language`, the page opens in it
 * (`?lang=`).
 */
export function portalUrl(
  publicUrl: string,
  organizationId: string,
  query: { token?: string; language?: string | undefined } = {},
): string {
  const params = new URLSearchParams();
  if (query.token) params.set("token", query.token);
  if (query.language) params.set("lang", query.language);
  const search = params.toString();
  return `${publicUrl}${PORTAL_PAGE_PATH}/${organizationId}${search ? `?${search}` : ""}`;
}
