import { z } from "zod";
import { controlsAsSpace } from "../controlChars.js";
import { EMAIL_ADDRESS, isEmailAddress } from "../email.js";
import { LANGUAGES } from "../languages.js";
import { dollarsToCents } from "../money.js";

/** "tickets[0].name" for a zod issue path. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

const ARTICLE: Record<string, string> = { array: "an array", object: "an object" };

/** Turns zod issues into an error body's `details`: one "<field> <problem>" line per problem. */
export function issuesToDetails(issues: ReadonlyArray<z.core.$ZodIssue>, input?: unknown): string[] {
  const details: string[] = [];
  // zod measures the length of any value that has one, even after its type check failed: a string sent
  // where a list belongs would also be reported as too long. The type problem is the only real one.
  const wrongType = new Set(issues.filter((i) => i.code === "invalid_type").map((i) => formatPath(i.path)));
  for (const issue of issues) {
    if ((issue.code === "too_small" || issue.code === "too_big") && wrongType.has(formatPath(issue.path)))
      continue;
    const field = formatPath(issue.path);
    const prefix = field ? `${field} ` : "body ";
    switch (issue.code) {
      case "invalid_type": {
        const received = valueAt(input, issue.path);
        if (received === undefined) details.push(`${prefix}is required`);
        else if (issue.expected === "int")
          details.push(
            typeof received === "number"
              ? `${prefix}must be a whole number`
              : `${prefix}must be a whole number, not ${describeType(received)}`,
          );
        else if (typeof received === "number" && issue.expected === "number")
          details.push(`${prefix}must be a finite number`);
        else
          details.push(
            `${prefix}must be ${ARTICLE[issue.expected] ?? `a ${issue.expected}`}, not ${describeType(received)}`,
          );
        break;
      }
      case "too_small": {
        const min = Number(issue.minimum);
        if (issue.origin === "string")
          details.push(
            min <= 1 ? `${prefix}must not be empty` : `${prefix}must be at least ${plural(min, "character")}`,
          );
        else if (issue.origin === "array")
          details.push(`${prefix}must contain at least ${plural(min, "item")}`);
        else details.push(`${prefix}must be ${issue.inclusive ? "at least" : "greater than"} ${min}`);
        break;
      }
      case "too_big": {
        const max = Number(issue.maximum);
        if (issue.origin === "string") details.push(`${prefix}must be at most ${plural(max, "character")}`);
        else if (issue.origin === "array")
          details.push(`${prefix}must contain at most ${plural(max, "item")}`);
        else details.push(`${prefix}must be ${issue.inclusive ? "at most" : "less than"} ${max}`);
        break;
      }
      case "invalid_value": {
        const options = issue.values.map(String).join(", ");
        // Left out altogether: say so, rather than that nothing is not one of the options.
        if (input !== undefined && valueAt(input, issue.path) === undefined)
          details.push(`${prefix}is required: one of ${options}`);
        else details.push(`${prefix}must be one of: ${options}`);
        break;
      }
      case "unrecognized_keys": {
        const where = field ? `${field}.` : "";
        for (const key of issue.keys.slice(0, MAX_NAMED_UNKNOWN_FIELDS))
          details.push(`${where}${shortName(key)} is not a recognised field`);
        const more = issue.keys.length - MAX_NAMED_UNKNOWN_FIELDS;
        if (more > 0)
          details.push(
            `${field || "body"}: ${plural(more, "more field")} ${more === 1 ? "is" : "are"} not recognised`,
          );
        break;
      }
      case "invalid_format":
        details.push(
          `${prefix}${issue.message.startsWith("must") ? issue.message : `must be a valid ${issue.format}`}`,
        );
        break;
      case "not_multiple_of":
        details.push(`${prefix}must be a whole number`);
        break;
      default:
        details.push(`${prefix}${issue.message}`);
    }
  }
  const unique = [...new Set(details)];
  if (unique.length <= MAX_DETAILS) return unique;
  return [...unique.slice(0, MAX_DETAILS), `and ${plural(unique.length - MAX_DETAILS, "more problem")}`];
}

/** A 400 names at most this many unknown fields of one object, and lists at most this many problems. */
const MAX_NAMED_UNKNOWN_FIELDS = 10;
const MAX_DETAILS = 50;

/** A field name as quoted back in a message: a hostile one is cut, not echoed whole. */
function shortName(key: string): string {
  return key.length > 64 ? `${key.slice(0, 64)}…` : key;
}

function valueAt(input: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let cur: unknown = input;
  for (const part of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[part];
  }
  return cur;
}

function formatLimit(n: number): string {
  return n.toLocaleString("en-US");
}

/**
 * A dollar amount with at most two decimals, within [min, max], parsed to integer cents.
 * `minExclusive` makes the lower bound strict (for "greater than 0").
 */
export function money(opts: { min: number; max: number; minExclusive?: boolean }) {
  const { min, max, minExclusive = false } = opts;
  const range = minExclusive
    ? `must be greater than ${formatLimit(min)} and at most ${formatLimit(max)}`
    : `must be between ${formatLimit(min)} and ${formatLimit(max)}`;
  return z
    .number()
    .meta({
      ...(minExclusive ? { exclusiveMinimum: min } : { minimum: min }),
      maximum: max,
      multipleOf: 0.01,
    })
    .check(
      z.superRefine((n, ctx) => {
        if (!Number.isFinite(n)) ctx.addIssue({ code: "custom", message: "must be a finite number" });
        else if (minExclusive ? n <= min : n < min) ctx.addIssue({ code: "custom", message: range });
        else if (n > max) ctx.addIssue({ code: "custom", message: range });
        else if (dollarsToCents(n) === null)
          ctx.addIssue({ code: "custom", message: "must have at most 2 decimal places" });
        // A hair above the bound (1e-9) is the bound itself in cents.
        else if (minExclusive && (dollarsToCents(n) as number) <= Math.round(min * 100))
          ctx.addIssue({ code: "custom", message: range });
      }),
    )
    .transform((n) => dollarsToCents(n) as number);
}

/**
 * Text as people mean it: Unicode NFC (so one word is one string, however it was typed), without control
 * characters (line breaks and tabs are kept), bidi overrides or isolates (which reorder what a reader sees)
 * or zero-width characters (which make two names that look the same differ).
 */
export function cleanText(text: string): string {
  return text.normalize("NFC").replace(
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes
    /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u200B-\u200D\u2060\uFEFF\u202A-\u202E\u2066-\u2069]/g,
    "",
  );
}

export const boundedString = (max: number) => z.string().overwrite(cleanText).trim().max(max);

/** Any C0 or C1 control character: line breaks and tabs too. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this finds
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;
const LINE_CHAR = "[^\\u0000-\\u001F\\u007F-\\u009F]";

/** What a refused single-line field is told, after its name. */
export const SINGLE_LINE_MESSAGE =
  "must be a single line of text (no line breaks, tabs or other control characters)";

/** True when `text` holds no control character (a line break, a tab): what a single-line field takes. */
export const isSingleLine = (text: string): boolean => !CONTROL.test(text);

/** Refuses text holding a control character (as typed, before cleanText would drop some). */
const oneLine = () =>
  z.superRefine((text: string, ctx) => {
    if (!isSingleLine(text)) ctx.addIssue({ code: "custom", message: SINGLE_LINE_MESSAGE });
  });

/**
 * Text that is one line, such as a name or an address line: as boundedString, but a control character
 * (a line break, a tab) anywhere in it is a 400, so that no header-like line can be slipped into what
 * pages and e-mails show.
 */
export const singleLineString = (max: number) =>
  z
    .string()
    .check(oneLine())
    .overwrite(cleanText)
    .trim()
    .max(max)
    .meta({ pattern: `^${LINE_CHAR}*$` });

/**
 * Text kept on one line, for what comes from a page's address rather than from a person (the UTM
 * parameters): each run of control characters (a line break, a tab) becomes a space instead of refusing
 * the request, so a stray %0A in a campaign link never costs a gift.
 */
export const flattenedLine = (max: number) =>
  z
    .string()
    .overwrite((text) => cleanText(controlsAsSpace(text)))
    .trim()
    .max(max);

/** A single-line text that is not blank. */
export const requiredSingleLine = (max: number) =>
  z
    .string()
    .check(oneLine())
    .overwrite(cleanText)
    .trim()
    .min(1)
    .max(max)
    .meta({ pattern: `^${LINE_CHAR}*[^\\s\\u0000-\\u001F\\u007F-\\u009F]${LINE_CHAR}*$` });
/**
 * How the document states an absolute https URL without credentials or fragment (the server may take
 * more, such as http in development, never less).
 */
export const HTTPS_URL = { format: "uri", pattern: "^https://[^/?#@\\s]+([/?][^#\\s]*)?$" };
/** As HTTPS_URL, http too: the addresses a development server takes. */
export const HTTP_OR_HTTPS_URL = { format: "uri", pattern: "^https?://[^/?#@\\s]+([/?][^#\\s]*)?$" };

/** What a URL field is told, after its name, when the address carries a user name or password. */
export const NO_CREDENTIALS = "must not contain a user name or password";

/**
 * Whether an address carries credentials (`https://user:secret@host/`): no URL field takes them (the
 * document's patterns refuse `@` before the path), since they would be shown or sent to others.
 */
export const hasCredentials = (url: URL): boolean => url.username !== "" || url.password !== "";

/**
 * What HTTPS_URL's pattern refuses that `new URL()` would take: whitespace inside the address and a
 * fragment (even an empty `#`). Undefined when the text has neither.
 */
export function urlTextProblem(raw: string): string | undefined {
  if (/\s/.test(raw)) return "must not contain spaces or line breaks (write a space as %20)";
  if (raw.includes("#")) return "must not contain a fragment (#...)";
  return undefined;
}

/** Text that is not blank: at least one character besides spaces (the document says so by a pattern). */
export const NOT_BLANK = "\\S";
export const requiredString = (max: number) =>
  z.string().overwrite(cleanText).trim().min(1).max(max).meta({ pattern: NOT_BLANK });

/**
 * Fields a read returns that the server computes: accepted on input and ignored, so that a record read
 * can be sent back as an update. Documented as read-only in the OpenAPI document.
 */
export function readOnlyFields<const K extends string>(
  ...names: K[]
): Record<K, z.ZodOptional<z.ZodUnknown>> {
  const field = z
    .unknown()
    .optional()
    .meta({ description: "Read-only (returned by reads); ignored on input", readOnly: true });
  return Object.fromEntries(names.map((name) => [name, field])) as Record<K, z.ZodOptional<z.ZodUnknown>>;
}

/**
 * One e-mail address as people give it: trimmed, in Unicode's composed form (NFC: an accent typed as a
 * letter of its own is kept with its letter, as most keyboards write it), at most 254 characters, the rule
 * of shared/email.ts.
 */
export const emailAddress = z
  .string()
  .trim()
  .normalize("NFC")
  .max(254)
  .meta(EMAIL_ADDRESS)
  .check(
    z.superRefine((v, ctx) => {
      if (!isEmailAddress(v)) ctx.addIssue({ code: "custom", message: "must be an email address" });
    }),
  );

/**
 * A supported language's BCP 47 tag, taken in any case (tags are case-insensitive: `pt-br`, `PT-BR`) and
 * kept in its canonical spelling (`pt-BR`). The document shows the canonical tags as its enum.
 */
export const languageTag = z.preprocess(
  (v) => (typeof v === "string" ? (LANGUAGES.find((l) => l.toLowerCase() === v.toLowerCase()) ?? v) : v),
  z.enum(LANGUAGES),
);

/**
 * Names every JavaScript object has already (`__proto__`, `constructor`, `toString`, …): an answer keyed by
 * one would read as the object's own property where none was given, so no question id may be one.
 */
const OBJECT_NAMES: ReadonlySet<string> = new Set([
  ...Object.getOwnPropertyNames(Object.prototype),
  "__proto__",
]);

/** A question's id: letters, digits, '-' and '_', at most `max` characters, never a name objects reserve. */
export function questionId(max: number) {
  return z
    .string()
    .trim()
    .min(1)
    .max(max)
    .regex(/^[A-Za-z0-9_-]+$/, { message: "must contain only letters, digits, '-' and '_'" })
    .refine((id) => !OBJECT_NAMES.has(id), {
      message: "must not be a name JavaScript objects reserve (__proto__, constructor, toString, …)",
    });
}
