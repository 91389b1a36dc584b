import { render } from "preact";
import { Portal } from "./Portal.js";

/** The donor portal page's script: the page names its organization on the root element. */
const root = document.getElementById("portal");
if (root) render(<Portal organizationId={root.dataset.org ?? ""} />, root);
