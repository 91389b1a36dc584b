/**
 * Formats a message compiled from ICU MessageFormat by @lingui/message-utils (on the server, once per
 * language), so that the browser carries no parser: a compiled message is text, or a list of text and
 * placeholders — `[name]`, `[name, "number"]`, `[name, "plural" | "selectordinal" | "select", cases]` — where
 * `#` in a plural case is the number. Plural categories come from Intl.PluralRules of the language.
 */

export type Placeholder = [name: string, type?: string, format?: unknown];
export type CompiledMessage = string | (string | Placeholder)[];
export type CompiledCatalog = Record<string, CompiledMessage>;
export type MessageValues = Record<string, string | number>;

const rules = new Map<string, Intl.PluralRules>();
function pluralRules(locale: string, ordinal: boolean): Intl.PluralRules {
  const key = `${locale}|${ordinal}`;
  let r = rules.get(key);
  if (!r) {
    r = new Intl.PluralRules(locale, { type: ordinal ? "ordinal" : "cardinal" });
    rules.set(key, r);
  }
  return r;
}

export function formatMessage(message: CompiledMessage, values: MessageValues, locale: string): string {
  return render(message, values, locale, undefined);
}

function render(
  message: CompiledMessage,
  values: MessageValues,
  locale: string,
  count: string | undefined,
): string {
  if (typeof message === "string") return message;
  let out = "";
  for (const part of message) {
    if (typeof part === "string") {
      out += part === "#" && count !== undefined ? count : part;
      continue;
    }
    const [name, type, format] = part;
    const cases =
      format !== null && typeof format === "object" ? (format as Record<string, CompiledMessage>) : null;
    const value = values[name];
    if (cases && (type === "plural" || type === "selectordinal")) {
      const n = Number(value);
      const branch =
        cases[String(n)] ?? cases[`=${n}`] ?? cases[pluralRules(locale, type !== "plural").select(n)];
      out += render(branch ?? cases.other ?? "", values, locale, new Intl.NumberFormat(locale).format(n));
    } else if (cases && type === "select") {
      out += render(cases[String(value)] ?? cases.other ?? "", values, locale, count);
    } else if (type === "number" && typeof value === "number") {
      out += new Intl.NumberFormat(locale).format(value);
    } else out += value === undefined ? `{${name}}` : String(value);
  }
  return out;
}
