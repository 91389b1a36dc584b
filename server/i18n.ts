import { compileMessage } from "@lingui/message-utils/compileMessage";
import { ar } from "../shared/i18n/catalogs/ar.js";
import { de } from "../shared/i18n/catalogs/de.js";
import { type Catalog, en, type MessageKey } from "../shared/i18n/catalogs/en.js";
import { es } from "../shared/i18n/catalogs/es.js";
import { fr } from "../shared/i18n/catalogs/fr.js";
import { ptBR } from "../shared/i18n/catalogs/pt-BR.js";
import { type CompiledCatalog, formatMessage, type MessageValues } from "../shared/i18n/format.js";
import { DEFAULT_LANGUAGE, fromAcceptLanguage, type Language, matchLanguage } from "../shared/languages.js";

/**
 * The message catalogs, compiled once per language with @lingui/message-utils (ICU MessageFormat), and the
 * choice of a page's language: `?lang=` first, then the donor's Accept-Language, then the organization's.
 */

export const CATALOGS: Record<Language, Catalog> = { en, es, fr, de, "pt-BR": ptBR, ar };

const compiled = new Map<Language, CompiledCatalog>();

export function compiledCatalog(language: Language): CompiledCatalog {
  let catalog = compiled.get(language);
  if (!catalog) {
    catalog = {};
    for (const [key, source] of Object.entries(CATALOGS[language])) catalog[key] = compileMessage(source);
    compiled.set(language, catalog);
  }
  return catalog;
}

/** The messages of one part of the product (`checkout.`, `portal.`), as a page sends them to its script. */
export function messagesFor(language: Language, prefix: string): CompiledCatalog {
  const all = compiledCatalog(language);
  const out: CompiledCatalog = {};
  for (const key of Object.keys(all)) if (key.startsWith(prefix)) out[key] = all[key];
  return out;
}

/** A message by a key made at run time (`checkout.line.<label>`); undefined when the catalog has none. */
export function messageIfAny(language: Language): (key: string) => string | undefined {
  const catalog: Partial<Record<string, CompiledCatalog[string]>> = compiledCatalog(language);
  return (key) => {
    const message = Object.hasOwn(catalog, key) ? catalog[key] : undefined;
    return message === undefined ? undefined : formatMessage(message, {}, language);
  };
}

/** A translator for server-rendered words. */
export function translator(language: Language): (key: MessageKey, values?: MessageValues) => string {
  const catalog = compiledCatalog(language);
  return (key, values = {}) => formatMessage(catalog[key], values, language);
}

/**
 * The donor's language, the one rule for pages, mails and checkouts: the one asked for (`?lang=`, or a
 * request body's `language`), else Accept-Language, else the organization's, else English.
 */
export function chooseLanguage(
  query: string | undefined,
  acceptLanguage: string | undefined,
  organizationLanguage: Language,
): Language {
  return (
    (query ? matchLanguage(query) : undefined) ??
    fromAcceptLanguage(acceptLanguage) ??
    organizationLanguage ??
    DEFAULT_LANGUAGE
  );
}
