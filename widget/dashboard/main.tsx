import { render } from "preact";
import "./dashboard.css";
import { keepFocusInPage } from "./focusKeeper.js";
import { followLink } from "./router.js";
import { Shell } from "./Shell.js";

/** The staff dashboard's module: the server's shell page has one element to draw into. */
const root = document.getElementById("dashboard");
if (root) {
  // A click on a link to another dashboard page moves there without reloading.
  document.addEventListener("click", followLink);
  keepFocusInPage(root);
  render(<Shell />, root);
}
