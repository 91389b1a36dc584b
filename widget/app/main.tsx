import "./app.css";
import { EMBED_ID_PARAM, EMBED_ID_PATTERN } from "../../shared/messages.js";
import { connectToHost, hostMessenger } from "../embed/iframe-side.js";
import type { Utm } from "./checkoutEnv.js";
import { takeOver } from "./hydrate.js";
import { setLocale } from "./locale.js";
import { createCheckout } from "./store.js";
import type { Boot } from "./view.js";

/**
 * The checkout app's browser entry (dist/widget/app.js). The hosted page holds the form's HTML, rendered on
 * the server, and the data it was rendered from as JSON; this takes over that HTML without a second fetch.
 * In an iframe (`?embed=1&embedId=…`; the overlay adds `overlay=1`) it reports its height, forwards Escape
 * and says `ready` and `checkout-complete` to the framing page (shared/messages.ts), to its origin only: the one the
 * server names in the boot data, else the referrer's.
 */

const root = document.getElementById("almoner-app");
const data = document.getElementById("almoner-boot");
if (root && data) {
  const boot = JSON.parse(data.textContent ?? "{}") as Boot;
  setLocale({
    language: boot.language ?? document.documentElement.lang ?? "en",
    currency: boot.view.currency,
    messages: boot.messages,
  });
  const params = new URLSearchParams(location.search);
  const utm: Utm = {};
  for (const key of ["source", "medium", "campaign", "term", "content"] as const) {
    const value = params.get(`utm_${key}`);
    if (value) utm[key] = value.slice(0, 200);
  }
  const embedId = params.get(EMBED_ID_PARAM);
  const framed = !!embedId && EMBED_ID_PATTERN.test(embedId);
  const send = framed && embedId ? hostMessenger(embedId, boot.parentOrigin) : undefined;
  const c = createCheckout(boot, {
    utm,
    elementId: params.get("elementid")?.slice(0, 100) || undefined,
    onComplete: () => send?.({ type: "checkout-complete" }),
  });
  takeOver(root, c, params.has("embed"));
  if (send && embedId) {
    connectToHost(embedId, boot.parentOrigin);
    send({ type: "ready" });
  }
}
