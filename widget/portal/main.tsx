import { render } from "preact";
import type { CompiledCatalog } from "../../shared/i18n/format.js";
import { setPortalLocale } from "./i18n.js";
import { Portal } from "./Portal.js";

/** The donor portal page's script: the page names its organization and sends its language's messages. */
const root = document.getElementById("portal");
const data = document.getElementById("portal-messages");
if (root) {
  setPortalLocale({
    language: document.documentElement.lang || "en",
    messages: JSON.parse(data?.textContent ?? "{}") as CompiledCatalog,
  });
  render(<Portal organizationId={root.dataset.org ?? ""} />, root);
}
