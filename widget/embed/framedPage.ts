import { EMBED_ID_PARAM, EMBED_ID_PATTERN } from "../../shared/messages.js";
import { connectToHost } from "./iframe-side.js";

/**
 * The script of the form host's message pages (a form that is inactive, deleted or unknown) in embed mode,
 * frame.js, which the server writes into such a page with the response's CSP nonce: like the checkout, the
 * page reports its height to the framing page and forwards Escape as `close`, so the iframe fits it and the
 * overlay closes from inside it. The framing page's origin is the one the server names on the script
 * element (`data-parent-origin`), else the referrer's.
 */
const script = document.currentScript as HTMLScriptElement | null;
const embedId = new URLSearchParams(location.search).get(EMBED_ID_PARAM);
if (embedId && EMBED_ID_PATTERN.test(embedId))
  connectToHost(embedId, script?.dataset.parentOrigin || undefined);
