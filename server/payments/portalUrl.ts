/** The donor portal of an organization: where its donors sign in with their e-mail address. */
export const PORTAL_PAGE_PATH = "/manage";

/** The portal's address; with `language`, the page opens in it (`?lang=`). */
export function portalUrl(publicUrl: string, organizationId: string, language?: string): string {
  const url = `${publicUrl}${PORTAL_PAGE_PATH}/${organizationId}`;
  return language ? `${url}?lang=${encodeURIComponent(language)}` : url;
}
