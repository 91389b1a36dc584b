/** What every page of the dashboard is given: the rest of its address and its query. */
export interface PageProps {
  /** The address's path after the page's own name ("pay_…" in /dashboard/payments/pay_…). */
  rest: string;
  query: URLSearchParams;
}
