import type { MessageKey } from "../../shared/i18n/catalogs/en.js";
import { type CompiledCatalog, formatMessage, type MessageValues } from "../../shared/i18n/format.js";

/** The portal page's language and messages (`portal.*` and the frequency names), sent inside the page. */

let language = "en";
let messages: CompiledCatalog = {};

export function setPortalLocale(next: { language: string; messages: CompiledCatalog }): void {
  language = next.language;
  messages = next.messages;
}

export const portalLanguage = (): string => language;

export function t(key: MessageKey, values: MessageValues = {}): string {
  const message = messages[key];
  return message === undefined ? key : formatMessage(message, values, language);
}
