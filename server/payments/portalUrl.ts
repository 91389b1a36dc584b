/** The donor portal of an organization: where its donors sign in with their e-mail address. */
export const PORTAL_PAGE_PATH = "/manage";

export function portalUrl(publicUrl: string, organizationId: string): string {
  return `${publicUrl}${PORTAL_PAGE_PATH}/${organizationId}`;
}
