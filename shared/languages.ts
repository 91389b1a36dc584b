/** The languages donors' pages, mails and documents speak (BCP 47 tags) and their writing direction. */

export const LANGUAGES = ["en", "es", "fr", "de", "pt-BR", "ar"] as const;
export type Language = (typeof LANGUAGES)[number];
export const DEFAULT_LANGUAGE: Language = "en";

/** The language's own name, for a switcher. */
export const LANGUAGE_NAMES: Record<Language, string> = {
  en: "English",
  es: "Español",
  fr: "Français",
  de: "Deutsch",
  "pt-BR": "Português (Brasil)",
  ar: "العربية",
};

export const isLanguage = (tag: string): tag is Language => (LANGUAGES as readonly string[]).includes(tag);

export const directionOf = (language: Language): "ltr" | "rtl" => (language === "ar" ? "rtl" : "ltr");

/**
 * The supported language a tag names, or undefined: exact (any case), else by its primary subtag
 * (`es-MX` → `es`, `pt` and `pt-PT` → `pt-BR`, `fr-CA` → `fr`).
 */
export function matchLanguage(tag: string): Language | undefined {
  const lower = tag.trim().toLowerCase();
  if (!lower) return undefined;
  const exact = LANGUAGES.find((l) => l.toLowerCase() === lower);
  if (exact) return exact;
  const primary = lower.split("-")[0];
  return LANGUAGES.find((l) => l.toLowerCase().split("-")[0] === primary);
}

/** The first supported language of an Accept-Language header, by its q weights. */
export function fromAcceptLanguage(header: string | undefined): Language | undefined {
  if (!header) return undefined;
  const ranked = header
    .split(",")
    .map((part, index) => {
      const [tag, ...params] = part.trim().split(";");
      const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
      const weight = q ? Number(q.slice(2)) : 1;
      return { tag: tag.trim(), weight: Number.isFinite(weight) ? weight : 0, index };
    })
    .filter((r) => r.tag && r.tag !== "*" && r.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.index - b.index);
  for (const r of ranked) {
    const match = matchLanguage(r.tag);
    if (match) return match;
  }
  return undefined;
}
