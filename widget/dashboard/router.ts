import { signal } from "@preact/signals";

/**
 * The dashboard's address: every page is a path under /dashboard, so a link can be shared, opened in a new
 * tab and reloaded (the server answers every such path with the same shell). Moving between pages changes the
 * address without reloading.
 */

export const BASE = "/dashboard";

export interface Location {
  /** The path below /dashboard, without a leading or trailing slash ("" for home). */
  path: string;
  query: URLSearchParams;
}

const read = (): Location => ({
  path: window.location.pathname.slice(BASE.length).replace(/^\/+|\/+$/g, ""),
  query: new URLSearchParams(window.location.search),
});

export const location = signal<Location>(read());

window.addEventListener("popstate", () => {
  location.value = read();
});

/** Goes to `href` (a path under /dashboard) without reloading. */
export function navigate(href: string, options: { replace?: boolean } = {}): void {
  if (options.replace) window.history.replaceState(null, "", href);
  else window.history.pushState(null, "", href);
  location.value = read();
}

/** The address of a page: `to("payments", { search: "a@b.org" })`. */
export function to(path: string, params: Record<string, string | undefined> = {}): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value) query.set(key, value);
  const text = query.toString();
  return `${BASE}${path ? `/${path}` : ""}${text ? `?${text}` : ""}`;
}

/** A click on a link to a dashboard page moves there without reloading (other clicks are left alone). */
export function followLink(event: MouseEvent): void {
  if (
    event.defaultPrevented ||
    event.button !== 0 ||
    event.metaKey ||
    event.ctrlKey ||
    event.shiftKey ||
    event.altKey
  )
    return;
  const link = (event.target as Element | null)?.closest?.("a");
  if (!link || link.target || link.hasAttribute("download")) return;
  const url = new URL(link.href, window.location.href);
  if (
    url.origin !== window.location.origin ||
    !(url.pathname === BASE || url.pathname.startsWith(`${BASE}/`))
  )
    return;
  event.preventDefault();
  navigate(url.pathname + url.search);
}
