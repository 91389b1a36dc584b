/**
 * Focus that would fall to the page's body when what held it goes away (a deleted row's button, a
 * question answered, a form that closed) goes instead to the page's heading, so a keyboard or screen
 * reader user stays on the page rather than at its very top with nothing read.
 */

/** The element focused last in `root`, while it is still in the page. */
let lastFocused: Element | null = null;
let watching = false;

/** Watches `root` (the dashboard's whole page) from now on; once. */
export function keepFocusInPage(root: HTMLElement): void {
  if (watching) return;
  watching = true;
  root.addEventListener("focusin", (event) => {
    lastFocused = event.target instanceof Element ? event.target : null;
  });
  new MutationObserver(() => {
    if (!lastFocused || lastFocused.isConnected) return;
    lastFocused = null;
    // After the page's own moves (a question takes focus on its Keep, whose click gives it back to the
    // button that asked; a page focuses its new message) have had their turn.
    setTimeout(rescue, 100);
  }).observe(root, { childList: true, subtree: true });
}

function rescue(): void {
  const active = document.activeElement;
  if (active && active !== document.body && active.isConnected) return;
  const heading = document.querySelector<HTMLElement>("main h1");
  if (!heading) return;
  if (!heading.hasAttribute("tabindex")) heading.tabIndex = -1;
  heading.focus();
}
