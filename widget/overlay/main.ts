import { installOverlay } from "./overlay.js";

/**
 * overlay.js as included by a page: `<script async src="https://<form host>/overlay.js"></script>`. The
 * checkout pages are on the script's own origin, so the script must be loaded from the form host.
 */
const script = document.currentScript as HTMLScriptElement | null;
if (script?.src) installOverlay(new URL(script.src).origin);
