import type { Receipt } from "./view.js";

/** What the page that starts the checkout gives it, beyond the form: where the API is, and hooks. */

export type Utm = Partial<Record<"source" | "medium" | "campaign" | "term" | "content", string>>;

export interface CheckoutEnv {
  /** Origin + path prefix of the API; "" on the form host's own pages. */
  apiBase?: string;
  fetch?: typeof fetch;
  utm?: Utm;
  elementId?: string;
  quoteDelayMs?: number;
  onComplete?: (receipt: Receipt) => void;
}
