import { escapeHtml } from "../../shared/html.js";
import { LANGUAGE_NAMES, LANGUAGES, type Language } from "../../shared/languages.js";
import { translator } from "../i18n.js";

/**
 * Links to the page in each language (`?lang=`), keeping the rest of its query; the current one marked.
 * Plain links: they work before (and without) the script.
 */
export function languageSwitcher(current: Language, query: string): string {
  const links = LANGUAGES.map((language) => {
    const params = new URLSearchParams(query);
    params.set("lang", language);
    const here = language === current ? ' aria-current="true"' : "";
    return `<a href="?${escapeHtml(params.toString())}" hreflang="${language}" lang="${language}"${here}>${escapeHtml(LANGUAGE_NAMES[language])}</a>`;
  });
  const label = escapeHtml(translator(current)("page.lang"));
  return `<nav class="alm-langs" aria-label="${label}">${links.join(" ")}</nav>`;
}
